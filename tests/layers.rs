//! The layers of `ARCHITECTURE.md`, kept true: every `crate::` reference in `src/` (a `use`,
//! a grouped `use crate::{a, b::c}`, or an inline path) from one top-level module to another
//! must point down or sideways in [`LAYERS`]; one pointing up fails with its file, line and
//! both layers, unless it is one of the [`KNOWN_DEBTS`] still to be cut.
//!
//! A Cargo workspace would make an upward import fail to compile; this test does the same
//! job without splitting the library (see `ARCHITECTURE.md`). Test code (`#[cfg(test)]`
//! modules, `tests.rs`, `*_tests.rs`) may reach anywhere and is not read.

mod common;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each layer, bottom first, with its top-level modules of `src/`: the table of
/// `ARCHITECTURE.md`. A module may use its own layer and those below it.
const LAYERS: &[(&str, &[&str])] = &[
    (
        "base",
        &[
            "error", "size", "limits", "secret", "output", "signals", "cmd", "policy", "data",
            "stats", "figures", "result", "host", "term", "fnv",
        ],
    ),
    ("probe", &["probe"]),
    ("provision", &["provision", "state", "owned"]),
    ("workload", &["workload", "corpus", "context"]),
    ("store", &["store", "journal"]),
    ("report", &["report", "compare", "price"]),
    (
        "plan",
        &["cli", "plan", "suite", "reps", "progress", "phase_time"],
    ),
    (
        "run",
        &[
            "run", "guest", "mpi", "doctor", "setup", "shell", "list", "fuzzing",
        ],
    ),
];

/// Upward references not cut yet, `"file -> module"`, each with why it is there. The list
/// may only shrink: an entry that no longer occurs fails the test, so remove it with the
/// import it names.
const KNOWN_DEBTS: &[(&str, &str)] = &[];

/// One `crate::` reference: the file, its line (1-based) and the top-level module named.
struct Ref {
    file: String,
    line: usize,
    module: String,
}

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The top-level modules of `src/`: `foo.rs` and `foo/`, without the crate roots.
fn modules(src: &Path) -> BTreeSet<String> {
    std::fs::read_dir(src)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter_map(|p| {
            let name = p.file_name()?.to_str()?.to_string();
            if p.is_dir() {
                Some(name)
            } else {
                name.strip_suffix(".rs").map(String::from)
            }
        })
        .filter(|m| m != "lib" && m != "main")
        .collect()
}

/// The lines of `text` with comments cut and `#[cfg(test)] mod x { … }` blocks blanked
/// (kept as empty lines, so line numbers stay true).
fn code_lines(text: &str) -> Vec<String> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::with_capacity(lines.len());
    let mut i = 0;
    while i < lines.len() {
        let next_is_mod = lines.get(i + 1).is_some_and(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("pub ").unwrap_or(l);
            l.starts_with("mod ") && l.contains('{')
        });
        if lines[i].trim() == "#[cfg(test)]" && next_is_mod {
            let mut depth = 0i64;
            let mut j = i + 1;
            while j < lines.len() {
                depth += lines[j].matches('{').count() as i64;
                depth -= lines[j].matches('}').count() as i64;
                if depth <= 0 {
                    break;
                }
                j += 1;
            }
            out.extend((i..=j.min(lines.len() - 1)).map(|_| String::new()));
            i = j + 1;
            continue;
        }
        let l = lines[i];
        out.push(l.find("//").map_or(l, |c| &l[..c]).to_string());
        i += 1;
    }
    out
}

/// The names at the top level of a group `{a, b::c, d::{e, f}}`, its braces excluded.
fn group_heads(inner: &str) -> Vec<String> {
    let mut heads = Vec::new();
    let (mut depth, mut item) = (0, String::new());
    for c in inner.chars().chain(std::iter::once(',')) {
        match c {
            '{' => depth += 1,
            '}' => depth -= 1,
            ',' if depth == 0 => {
                let name: String = item
                    .trim()
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                heads.push(name);
                item.clear();
                continue;
            }
            _ => {}
        }
        item.push(c);
    }
    heads
}

/// Every `crate::` reference to a top-level module in the non-test code of `src/`.
fn references(mods: &BTreeSet<String>) -> Vec<Ref> {
    let mut refs = Vec::new();
    for (file, path) in common::source_files() {
        let lines = code_lines(&std::fs::read_to_string(&path).unwrap());
        let joined = lines.join("\n");
        let line_of = |at: usize| joined[..at].matches('\n').count() + 1;
        let mut push = |at: usize, module: &str| {
            if mods.contains(module) {
                refs.push(Ref {
                    file: file.clone(),
                    line: line_of(at),
                    module: module.to_string(),
                });
            }
        };
        for (at, _) in joined.match_indices("crate::") {
            if joined[..at].ends_with('$') {
                continue; // a macro's own `$crate::`
            }
            let rest = &joined[at + "crate::".len()..];
            if let Some(group) = rest.strip_prefix('{') {
                let mut depth = 1;
                let end = group
                    .char_indices()
                    .find(|&(_, c)| {
                        depth += match c {
                            '{' => 1,
                            '}' => -1,
                            _ => 0,
                        };
                        depth == 0
                    })
                    .map_or(group.len(), |(e, _)| e);
                for head in group_heads(&group[..end]) {
                    push(at, &head);
                }
            } else {
                let head: String = rest
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                push(at, &head);
            }
        }
    }
    refs
}

/// The top-level module a file of `src/` belongs to.
fn module_of(file: &str) -> String {
    let rel = file.strip_prefix("src/").unwrap();
    match rel.split_once('/') {
        Some((dir, _)) => dir.to_string(),
        None => rel.strip_suffix(".rs").unwrap().to_string(),
    }
}

#[test]
fn no_reference_points_up_the_layers_except_the_known_debts() {
    let src = root().join("src");
    let mods = modules(&src);
    let layer: BTreeMap<&str, (usize, &str)> = LAYERS
        .iter()
        .enumerate()
        .flat_map(|(i, (name, ms))| ms.iter().map(move |m| (*m, (i, *name))))
        .collect();
    let unplaced: Vec<&String> = mods
        .iter()
        .filter(|m| !layer.contains_key(m.as_str()))
        .collect();
    assert!(
        unplaced.is_empty(),
        "top-level modules in no layer: {unplaced:?}; add each to LAYERS in tests/layers.rs \
         and to ARCHITECTURE.md"
    );
    let gone: Vec<&&str> = layer.keys().filter(|m| !mods.contains(**m)).collect();
    assert!(
        gone.is_empty(),
        "LAYERS names modules src/ no longer has: {gone:?}"
    );

    let debts: BTreeMap<&str, &str> = KNOWN_DEBTS.iter().copied().collect();
    let mut seen = BTreeSet::new();
    let mut wrong = Vec::new();
    for r in references(&mods) {
        let from = module_of(&r.file);
        let Some(&(from_i, from_layer)) = layer.get(from.as_str()) else {
            continue; // lib.rs and main.rs: the roots
        };
        let (to_i, to_layer) = layer[r.module.as_str()];
        if to_i <= from_i {
            continue;
        }
        let key = format!("{} -> {}", r.file, r.module);
        if debts.contains_key(key.as_str()) {
            seen.insert(key);
        } else {
            wrong.push(format!(
                "{}:{}: {from} ({from_layer}) uses {} ({to_layer}), a layer above it",
                r.file, r.line, r.module
            ));
        }
    }
    assert!(
        wrong.is_empty(),
        "references against the layers of ARCHITECTURE.md; move the code down (or the \
         caller up) instead:\n{}",
        wrong.join("\n")
    );
    let paid: Vec<&&str> = debts.keys().filter(|d| !seen.contains(**d)).collect();
    assert!(
        paid.is_empty(),
        "KNOWN_DEBTS entries that no longer occur; remove them from tests/layers.rs: {paid:?}"
    );
}

/// One module style: a module with submodules is a folder with its `mod.rs`, never a
/// `foo.rs` beside a `foo/`, so each module's files are in one place.
#[test]
fn a_module_with_submodules_is_a_folder_with_mod_rs() {
    let beside: Vec<String> = common::source_files()
        .into_iter()
        .filter(|(_, f)| f.with_extension("").is_dir())
        .map(|(rel, _)| rel)
        .collect();
    assert!(
        beside.is_empty(),
        "move each into its folder as mod.rs (git mv src/foo.rs src/foo/mod.rs): {beside:?}"
    );
}

#[test]
fn architecture_md_names_every_top_level_module() {
    let doc = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let missing: Vec<String> = modules(&root().join("src"))
        .into_iter()
        .filter(|m| !doc.contains(&format!("`{m}`")))
        .collect();
    assert!(
        missing.is_empty(),
        "ARCHITECTURE.md does not name these modules of src/ (as `name`): {missing:?}"
    );
}

#[test]
fn the_reader_sees_grouped_inline_and_skips_test_modules() {
    let text = "use crate::{a, b::{c, d}, e::f};\nfn g() { crate::h::i(); } // crate::j\n\
                #[cfg(test)]\nmod tests {\n    use crate::k;\n}\nuse crate::l;\n";
    let lines = code_lines(text);
    assert_eq!(lines.len(), 7);
    assert_eq!(lines[4], "");
    let joined = lines.join("\n");
    assert!(!joined.contains("crate::j") && !joined.contains("crate::k"));
    assert_eq!(group_heads("a, b::{c, d}, e::f"), ["a", "b", "e"]);
    assert_eq!(module_of("src/report/fit.rs"), "report");
    assert_eq!(module_of("src/error.rs"), "error");
    assert_eq!(module_of("src/store/mod.rs"), "store");
}
