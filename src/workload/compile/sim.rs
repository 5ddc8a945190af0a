//! compilebench's random choices: the trees in each state, the operations, and the
//! simulation that picks them with Python's generator in the original's order.

use super::*;

/// An insertion-ordered set of tree names with Python dict semantics: inserting an
/// existing key keeps its place, removing keeps the others' order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(super) struct Trees(pub(super) Vec<String>);

impl Trees {
    pub(super) fn insert(&mut self, name: &str) {
        if !self.0.iter().any(|n| n == name) {
            self.0.push(name.to_string());
        }
    }

    pub(super) fn remove(&mut self, name: &str) {
        self.0.retain(|n| n != name);
    }

    /// Equality as Python compares dicts: same keys, any order.
    pub(super) fn same_keys(&self, other: &Trees) -> bool {
        self.0.len() == other.0.len() && self.0.iter().all(|n| other.0.contains(n))
    }
}

/// Which set of trees (the state of a tree).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum State {
    Unpatched,
    Patched,
    UnpatchedCompiled,
    PatchedCompiled,
}

/// Which dataset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Set {
    Unpatched,
    Patched,
    UnpatchedCompiled,
    Compiled,
}

/// The random operations, in compilebench's `ops` tuple order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Operation {
    Patch,
    Compile,
    Clean,
    Delete,
    Create,
    Read,
    Stat,
}

pub(super) const OPS: [Operation; 7] = [
    Operation::Patch,
    Operation::Compile,
    Operation::Clean,
    Operation::Delete,
    Operation::Create,
    Operation::Read,
    Operation::Stat,
];

/// One step decided by the simulation: what to do to which tree.
#[derive(Clone, Debug)]
pub(super) enum Step {
    /// Write `set` into `tree` (create, patch, compile); `unlink` and `read_first` for a
    /// patch.
    Write {
        spec: &'static PhaseSpec,
        set: Set,
        tree: String,
        unlink: bool,
        read_first: bool,
    },
    Clean {
        set: Set,
        tree: String,
    },
    Delete {
        tree: String,
        compiled: bool,
    },
    Read {
        tree: String,
        compiled: bool,
    },
    Stat {
        tree: String,
        compiled: bool,
    },
}

/// compilebench's bookkeeping and choices, separate from the I/O so that it can be tested
/// and compared with the original step by step.
pub(super) struct Sim {
    pub(super) rnd: Mt19937,
    pub(super) unpatched: Trees,
    pub(super) patched: Trees,
    pub(super) unpatched_compiled: Trees,
    pub(super) patched_compiled: Trees,
}

impl Sim {
    pub(super) fn trees(&mut self, s: State) -> &mut Trees {
        match s {
            State::Unpatched => &mut self.unpatched,
            State::Patched => &mut self.patched,
            State::UnpatchedCompiled => &mut self.unpatched_compiled,
            State::PatchedCompiled => &mut self.patched_compiled,
        }
    }

    /// Picks one of `options` whose source set is non-empty, then a tree in it.
    pub(super) fn pick<T: Copy>(&mut self, options: &[(T, State)]) -> Option<(T, State, String)> {
        let good: Vec<_> = options
            .iter()
            .copied()
            .filter(|(_, s)| !self.trees(*s).0.is_empty())
            .collect();
        if good.is_empty() {
            return None;
        }
        let (x, state) = good[self.rnd.choice(good.len())];
        let len = self.trees(state).0.len();
        let k = self.rnd.choice(len);
        Some((x, state, self.trees(state).0[k].clone()))
    }

    pub(super) fn moved(&mut self, tree: &str, from: State, to: State) {
        self.trees(from).remove(tree);
        self.trees(to).insert(tree);
    }

    pub(super) fn is_compiled(&self, trees: &Trees) -> bool {
        trees.same_keys(&self.unpatched_compiled) || trees.same_keys(&self.patched_compiled)
    }

    /// Decides `op` as compilebench would; `None` when no tree is in a suitable state.
    /// `exists` tells whether a tree name is taken (compilebench checks the directory).
    pub(super) fn step(&mut self, op: Operation, exists: &dyn Fn(&str) -> bool) -> Option<Step> {
        use State::*;
        Some(match op {
            Operation::Patch => {
                let opts = [
                    ((Set::Patched, Patched), Unpatched),
                    ((Set::Compiled, PatchedCompiled), UnpatchedCompiled),
                ];
                let ((set, to), from, tree) = self.pick(&opts)?;
                let unlink = self.rnd.randint(0, 3) == 1;
                self.moved(&tree, from, to);
                Step::Write {
                    spec: &PATCH,
                    set,
                    tree,
                    unlink,
                    read_first: true,
                }
            }
            Operation::Compile => {
                let opts = [
                    ((Set::UnpatchedCompiled, UnpatchedCompiled), Unpatched),
                    ((Set::Compiled, PatchedCompiled), Patched),
                ];
                let ((set, to), from, tree) = self.pick(&opts)?;
                self.moved(&tree, from, to);
                Step::Write {
                    spec: &COMPILE,
                    set,
                    tree,
                    unlink: false,
                    read_first: false,
                }
            }
            Operation::Clean => {
                let opts = [
                    ((Set::Compiled, Patched), PatchedCompiled),
                    ((Set::UnpatchedCompiled, Unpatched), UnpatchedCompiled),
                ];
                let ((set, to), from, tree) = self.pick(&opts)?;
                self.moved(&tree, from, to);
                Step::Clean { set, tree }
            }
            Operation::Delete => {
                let opts = [
                    ((), Patched),
                    ((), Unpatched),
                    ((), UnpatchedCompiled),
                    ((), PatchedCompiled),
                ];
                let ((), from, tree) = self.pick(&opts)?;
                self.trees(from).remove(&tree);
                // compilebench compares the emptied dict by content (see module doc).
                let emptied = self.trees(from).clone();
                let compiled = self.is_compiled(&emptied);
                Step::Delete { tree, compiled }
            }
            Operation::Read | Operation::Stat => {
                let opts = [
                    ((), Patched),
                    ((), Unpatched),
                    ((), UnpatchedCompiled),
                    ((), PatchedCompiled),
                ];
                let ((), from, tree) = self.pick(&opts)?;
                let set = self.trees(from).clone();
                let compiled = self.is_compiled(&set);
                if op == Operation::Read {
                    Step::Read { tree, compiled }
                } else {
                    Step::Stat { tree, compiled }
                }
            }
            Operation::Create => {
                let mut tree = format!("kernel-{}", self.rnd.randint(100, 100_000));
                while exists(&tree) {
                    tree = format!("kernel-{}", self.rnd.randint(100, 100_000));
                }
                self.unpatched.insert(&tree);
                Step::Write {
                    spec: &CREATE,
                    set: Set::Unpatched,
                    tree,
                    unlink: false,
                    read_first: false,
                }
            }
        })
    }
}
