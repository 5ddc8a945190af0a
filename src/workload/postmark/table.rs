//! postmark's file table and its operations: the slots, the directories, and the create,
//! read, append and delete of one transaction, each timed on the worker when given one.

use super::*;

/// A slot of postmark's file table.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Slot {
    /// 0 = free.
    pub(super) size: u64,
    /// The counter that names the file.
    pub(super) id: u64,
    /// Its subdirectory (`s<sub>`), when subdirectories are used.
    pub(super) sub: Option<u32>,
}

/// Postmark's state: generator, file table and counters.
pub(super) struct State {
    pub(super) cfg: Config,
    pub(super) rnd: Mt19937,
    pub(super) table: Vec<Slot>,
    pub(super) allocated: usize,
    pub(super) created: u64,
    pub(super) deleted: u64,
    pub(super) read: u64,
    pub(super) appended: u64,
    pub(super) bytes_read: u64,
    pub(super) bytes_written: u64,
    /// The source buffer (2 × size_high bytes), filled from the data pool.
    pub(super) source: Vec<u8>,
    pub(super) read_buf: Vec<u8>,
    pub(super) root: PathBuf,
    /// The directories files are opened in, by name relative to them (`openat`): the root,
    /// or `s0`, `s1`, … Opened by [`State::open_dirs`] at the start of each phase and
    /// closed at its end, so that nothing is open when the cache policy remounts the
    /// target between phases.
    pub(super) dirs: Vec<File>,
}

/// What one transaction did, for tests: (read-or-append, create-or-delete), as slot
/// indices; `None` where the half was disabled or did nothing.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Half {
    Read(usize),
    Append(usize, u64),
    SkippedAppend(usize),
    Create(usize),
    CreateFailed,
    Delete(usize),
}

impl State {
    pub(super) fn new(cfg: &Config, root: &Path) -> Self {
        let mut rnd = Mt19937::sgenrand_1999(cfg.seed);
        // initialize_file_source: one draw per byte of the 2 × size_high buffer.
        for _ in 0..2 * cfg.high {
            rnd.next_u32();
        }
        Self {
            cfg: cfg.clone(),
            rnd,
            table: vec![Slot::default(); 2 * cfg.number as usize],
            allocated: 0,
            created: 0,
            deleted: 0,
            read: 0,
            appended: 0,
            bytes_read: 0,
            bytes_written: 0,
            source: Vec::new(),
            read_buf: vec![0; cfg.read_block],
            root: root.to_path_buf(),
            dirs: Vec::new(),
        }
    }

    /// postmark's RND(x): genrand() mod x, and no draw at all for x = 0.
    pub(super) fn rnd(&mut self, x: u64) -> u64 {
        if x > 0 {
            u64::from(self.rnd.next_u32()) % x
        } else {
            0
        }
    }

    pub(super) fn path(&self, slot: &Slot) -> PathBuf {
        match slot.sub {
            Some(s) => self.root.join(format!("s{s}")).join(slot.id.to_string()),
            None => self.root.join(slot.id.to_string()),
        }
    }

    pub(super) fn dir_of(&self, slot: &Slot) -> PathBuf {
        match slot.sub {
            Some(s) => self.root.join(format!("s{s}")),
            None => self.root.clone(),
        }
    }

    /// Opens the directories the files live in (see `dirs`).
    pub(super) fn open_dirs(&mut self) -> Result<()> {
        self.dirs.clear();
        let subs = if self.cfg.subdirs > 1 {
            (0..self.cfg.subdirs as u32).map(Some).collect()
        } else {
            vec![None]
        };
        for sub in subs {
            let d = self.dir_of(&Slot {
                sub,
                ..Slot::default()
            });
            self.dirs.push(File::open(&d).on("open", &d)?);
        }
        Ok(())
    }

    /// Opens `slot`'s file by its name in its directory (postmark opens the whole path;
    /// the kernel's walk of the work directory's components is the tool's cost, not the
    /// workload's — see the module docs).
    pub(super) fn open_at(&self, slot: &Slot, flags: i32, mode: u32) -> std::io::Result<File> {
        use std::os::fd::{AsRawFd, FromRawFd};
        let mut buf = [0u8; 24];
        let name = c_name(slot.id, &mut buf);
        let dir = self.dirs[slot.sub.map_or(0, |s| s as usize)].as_raw_fd();
        // SAFETY: `name` is NUL-terminated; openat returns a new descriptor we then own.
        let fd = unsafe { libc::openat(dir, name.as_ptr(), flags | libc::O_CLOEXEC, mode) };
        if fd < 0 {
            return Err(std::io::Error::last_os_error());
        }
        // SAFETY: fd is a fresh descriptor owned by nothing else.
        Ok(unsafe { File::from_raw_fd(fd) })
    }

    /// Removes `slot`'s file by its name in its directory.
    pub(super) fn unlink_at(&self, slot: &Slot) -> std::io::Result<()> {
        use std::os::fd::AsRawFd;
        let mut buf = [0u8; 24];
        let name = c_name(slot.id, &mut buf);
        let dir = self.dirs[slot.sub.map_or(0, |s| s as usize)].as_raw_fd();
        // SAFETY: `name` is NUL-terminated.
        if unsafe { libc::unlinkat(dir, name.as_ptr(), 0) } != 0 {
            return Err(std::io::Error::last_os_error());
        }
        Ok(())
    }

    /// An error of operation `op` on `slot`'s file, named by its whole path.
    pub(super) fn err(&self, op: &str, slot: &Slot, e: std::io::Error) -> anyhow::Error {
        anyhow::Error::new(e).context(format!("{op} {}", self.path(slot).display()))
    }

    /// fsyncs `slot`'s directory under `--sync each` (see `Worker::after_dir_change`).
    pub(super) fn after_dir_change(&self, w: &mut Worker, slot: &Slot) -> Result<()> {
        if w.sync_policy() == SyncPolicy::Each {
            let dir = self.dir_of(slot);
            w.after_dir_change(&dir).on("fsync", &dir)?;
        }
        Ok(())
    }

    /// find_free_file: the next slot from the moving pointer, else the first free one.
    pub(super) fn find_free(&mut self) -> Option<usize> {
        let n = self.table.len();
        if self.allocated < n && self.table[self.allocated].size == 0 {
            self.allocated += 1;
            return Some(self.allocated - 1);
        }
        let i = self.table.iter().position(|s| s.size == 0)?;
        self.allocated = i + 1;
        Some(i)
    }

    /// find_used_file: probe random slots until one holds a file.
    pub(super) fn find_used(&mut self) -> usize {
        loop {
            let i = self.rnd(self.table.len() as u64) as usize;
            if self.table[i].size != 0 {
                return i;
            }
        }
    }

    /// create_file: name, size, write; returns the slot or `None` when the table is full.
    /// Recorded as a part of a transaction when `part`, else as an operation.
    pub(super) fn create(&mut self, w: Option<&mut Worker>, part: bool) -> Result<Option<usize>> {
        let Some(i) = self.find_free() else {
            return Ok(None);
        };
        let sub = (self.cfg.subdirs > 1).then(|| self.rnd(self.cfg.subdirs) as u32);
        self.created += 1;
        let size = self.cfg.low + self.rnd(self.cfg.high - self.cfg.low);
        self.table[i] = Slot {
            size,
            id: self.created,
            sub,
        };
        if let Some(w) = w {
            let slot = self.table[i];
            let t = w.start();
            let (flags, mode) = if self.cfg.buffered {
                (libc::O_WRONLY | libc::O_CREAT | libc::O_TRUNC, 0o666)
            } else {
                (libc::O_RDWR | libc::O_CREAT, 0o644)
            };
            let f = self
                .open_at(&slot, flags, mode)
                .map_err(|e| self.err("create", &slot, e))?;
            self.write_blocks(w, f, size, &slot)?;
            self.after_dir_change(w, &slot)?;
            if part {
                w.done_part(Op::Create, t, size);
            } else {
                w.done(Op::Create, t, size);
            }
        }
        self.bytes_written += size;
        Ok(Some(i))
    }

    /// write_blocks / fwrite_blocks: `size` bytes from the start of the source buffer in
    /// write_block pieces, then close.
    pub(super) fn write_blocks(
        &mut self,
        w: &mut Worker,
        f: File,
        size: u64,
        slot: &Slot,
    ) -> Result<()> {
        let wb = self.cfg.write_block;
        let blksize = f
            .metadata()
            .map_err(|e| self.err("fstat", slot, e))?
            .blksize()
            .max(512) as usize;
        let mut out: Box<dyn Write> = if self.cfg.buffered {
            Box::new(BufWriter::with_capacity(blksize, &f))
        } else {
            Box::new(&f)
        };
        let (mut left, mut offset) = (size as usize, 0usize);
        while left >= wb {
            out.write_all(&self.source[offset..offset + wb])
                .map_err(|e| self.err("write", slot, e))?;
            left -= wb;
            offset += wb;
        }
        out.write_all(&self.source[offset..offset + left])
            .map_err(|e| self.err("write", slot, e))?;
        out.flush().map_err(|e| self.err("write", slot, e))?;
        drop(out);
        w.after_write(&f).map_err(|e| self.err("fsync", slot, e))?;
        Ok(())
    }

    pub(super) fn read_file(&mut self, w: Option<&mut Worker>, i: usize) -> Result<()> {
        let slot = self.table[i];
        if let Some(w) = w {
            let t = w.start();
            let f = self
                .open_at(&slot, libc::O_RDONLY, 0)
                .map_err(|e| self.err("open", &slot, e))?;
            let rb = self.cfg.read_block;
            let mut input: Box<dyn Read> = if self.cfg.buffered {
                let blksize = f
                    .metadata()
                    .map_err(|e| self.err("fstat", &slot, e))?
                    .blksize()
                    .max(512) as usize;
                Box::new(BufReader::with_capacity(blksize, f))
            } else {
                Box::new(f)
            };
            let mut left = slot.size as usize;
            while left > 0 {
                let n = left.min(rb);
                if let Err(e) = input.read_exact(&mut self.read_buf[..n]) {
                    return Err(self.err("read", &slot, e));
                }
                left -= n;
            }
            w.done_part(Op::Read, t, slot.size);
        }
        self.bytes_read += slot.size;
        self.read += 1;
        Ok(())
    }

    pub(super) fn append_file(&mut self, w: Option<&mut Worker>, i: usize) -> Result<Half> {
        let slot = self.table[i];
        if slot.size >= self.cfg.high {
            return Ok(Half::SkippedAppend(i));
        }
        let block = self.rnd(self.cfg.high - slot.size) + 1;
        if let Some(w) = w {
            let t = w.start();
            let flags = if self.cfg.buffered {
                libc::O_WRONLY | libc::O_CREAT | libc::O_APPEND
            } else {
                libc::O_RDWR | libc::O_APPEND
            };
            let f = self
                .open_at(&slot, flags, 0o644)
                .map_err(|e| self.err("open", &slot, e))?;
            self.write_blocks(w, f, block, &slot)?;
            w.done_part(Op::Append, t, block);
        }
        self.table[i].size += block;
        self.bytes_written += block;
        self.appended += 1;
        Ok(Half::Append(i, block))
    }

    pub(super) fn delete_file(
        &mut self,
        w: Option<&mut Worker>,
        i: usize,
        part: bool,
    ) -> Result<()> {
        let slot = self.table[i];
        if slot.size == 0 {
            return Ok(());
        }
        if let Some(w) = w {
            let t = w.start();
            self.unlink_at(&slot)
                .map_err(|e| self.err("unlink", &slot, e))?;
            self.after_dir_change(w, &slot)?;
            if part {
                w.done_part(Op::Delete, t, 0);
            } else {
                w.done(Op::Delete, t, 0);
            }
        }
        self.table[i].size = 0;
        self.deleted += 1;
        Ok(())
    }

    /// One transaction; `w` is `None` to only make the choices (tests).
    pub(super) fn transaction(&mut self, mut w: Option<&mut Worker>) -> Result<[Option<Half>; 2]> {
        let mut halves = [None, None];
        if self.cfg.bias_read != -1 {
            let read = (self.rnd(10) as i64) < i64::from(self.cfg.bias_read);
            let i = self.find_used();
            halves[0] = Some(if read {
                self.read_file(w.as_deref_mut(), i)?;
                Half::Read(i)
            } else {
                self.append_file(w.as_deref_mut(), i)?
            });
        }
        if self.cfg.bias_create != -1 {
            halves[1] = Some(if (self.rnd(10) as i64) < i64::from(self.cfg.bias_create) {
                match self.create(w.as_deref_mut(), true)? {
                    Some(i) => Half::Create(i),
                    None => Half::CreateFailed,
                }
            } else {
                let i = self.find_used();
                self.delete_file(w, i, true)?;
                Half::Delete(i)
            });
        }
        Ok(halves)
    }
}

/// `id` in decimal, NUL-terminated, in `buf` (postmark's file names are its counter).
pub(super) fn c_name(id: u64, buf: &mut [u8; 24]) -> &std::ffi::CStr {
    let mut digits = [0u8; 20];
    let (mut n, mut len) = (id, 0);
    loop {
        digits[len] = b'0' + (n % 10) as u8;
        len += 1;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    for (i, d) in digits[..len].iter().rev().enumerate() {
        buf[i] = *d;
    }
    buf[len] = 0;
    std::ffi::CStr::from_bytes_with_nul(&buf[..=len]).expect("one NUL, at the end")
}
