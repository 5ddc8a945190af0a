//! A VFS shim that counts SQLite's fsyncs: `fsarena-count` wraps the default `unix` VFS,
//! forwards every call to it, and counts each successful `xSync` of a watched database's
//! files (the database, its rollback journal, its WAL) in an [`AtomicU64`].
//!
//! How (the SQLite VFS docs, <https://sqlite.org/vfs.html>, and `os_unix.c`): `xOpen` opens
//! the file through the real VFS into the tail of a larger `sqlite3_file` whose head is
//! [`Counted`]; the head's methods table forwards to the real file's methods, with the same
//! `iVersion` (so the `xShm*` methods WAL needs, and `xFetch`/`xUnfetch`, are there exactly
//! when the real file has them). Every other VFS method is the real VFS's own (its struct is
//! copied, with the real `pAppData`).
//!
//! What is counted: one fsync per successful `xSync` (on Linux, `unixSync` makes exactly one
//! `fsync` or `fdatasync` call), plus the directory fsync that `unixSync` adds on the first
//! sync of a journal or WAL file opened with `SQLITE_OPEN_CREATE` (its `UNIXFILE_DIRSYNC`
//! flag, set in `unixOpen` from the same open flags this shim sees). Checked against
//! `strace -f -e trace=fsync,fdatasync` in docs/validation/2026-11-workloads.md.

use anyhow::{anyhow, Result};
use rusqlite::ffi;
use std::ffi::{c_char, c_int, c_void, CStr};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Once, OnceLock};

/// The name connections open the shim by.
pub const NAME: &str = "fsarena-count";
const NAME_C: &CStr = c"fsarena-count";

/// The real `unix` VFS (a pointer, kept as an address: raw pointers are not `Sync`).
static REAL: OnceLock<usize> = OnceLock::new();
static REGISTER: Once = Once::new();

/// Databases whose syncs are counted: (full path of the database file, its counter). A
/// file is counted by the first entry whose path is a prefix of its name (`bench.db`,
/// `bench.db-journal`, `bench.db-wal`).
static WATCHED: Mutex<Vec<(Vec<u8>, Arc<AtomicU64>)>> = Mutex::new(Vec::new());

/// The head of every file the shim opens; the real VFS's file follows at [`HEADER`].
#[repr(C)]
struct Counted {
    base: ffi::sqlite3_file,
    /// The watched database's counter (from `Arc::into_raw`), or null.
    counter: *const AtomicU64,
    /// `unixSync` will also fsync the directory at the next sync.
    dir_sync_pending: bool,
}

/// Bytes before the real file: the head rounded up to 8 (SQLite's allocation alignment).
const HEADER: usize = (std::mem::size_of::<Counted>() + 7) & !7;

/// Registers the shim once per process; fails when there is no `unix` VFS to wrap.
pub fn register() -> Result<()> {
    REGISTER.call_once(|| unsafe {
        let real = ffi::sqlite3_vfs_find(c"unix".as_ptr());
        if real.is_null() {
            return;
        }
        let mut vfs: ffi::sqlite3_vfs = std::ptr::read(real);
        vfs.zName = NAME_C.as_ptr();
        vfs.pNext = std::ptr::null_mut();
        vfs.szOsFile = (HEADER + (*real).szOsFile as usize) as c_int;
        vfs.xOpen = Some(x_open);
        let _ = REAL.set(real as usize);
        // A failed registration shows below: the name is not found.
        ffi::sqlite3_vfs_register(Box::leak(Box::new(vfs)), 0);
    });
    let found = unsafe { ffi::sqlite3_vfs_find(NAME_C.as_ptr()) };
    if REAL.get().is_none() || found.is_null() {
        return Err(anyhow!(
            "sqlite: cannot register the counting VFS (no \"unix\" VFS in this SQLite)"
        ));
    }
    Ok(())
}

/// The count of fsyncs of one database's files, for as long as it lives.
pub struct SyncCounter {
    count: Arc<AtomicU64>,
}

impl SyncCounter {
    /// Counts the syncs of `db` (a file in an existing directory) and of its journal and
    /// WAL, for connections opened through the shim from now on.
    pub fn watch(db: &Path) -> Result<Self> {
        register()?;
        let dir = db.parent().unwrap_or(Path::new("."));
        // SQLite names files by their full path with symlinks resolved.
        let dir = std::fs::canonicalize(dir)
            .map_err(|e| anyhow!("sqlite: resolving {}: {e}", dir.display()))?;
        let name = db.file_name().ok_or_else(|| anyhow!("sqlite: no file name"))?;
        let full = dir.join(name);
        let key = full.as_os_str().as_encoded_bytes().to_vec();
        let count = Arc::new(AtomicU64::new(0));
        lock().push((key, count.clone()));
        Ok(Self { count })
    }

    /// Fsyncs counted so far.
    pub fn get(&self) -> u64 {
        self.count.load(Ordering::Relaxed)
    }
}

impl Drop for SyncCounter {
    fn drop(&mut self) {
        lock().retain(|(_, c)| !Arc::ptr_eq(c, &self.count));
    }
}

fn lock() -> std::sync::MutexGuard<'static, Vec<(Vec<u8>, Arc<AtomicU64>)>> {
    WATCHED.lock().unwrap_or_else(|e| e.into_inner())
}

/// The counter of the watched database that file `name` belongs to, as a raw `Arc`.
fn counter_for(name: &[u8]) -> *const AtomicU64 {
    let watched = lock();
    match watched.iter().find(|(k, _)| name.starts_with(k)) {
        Some((_, c)) => Arc::into_raw(c.clone()),
        None => std::ptr::null(),
    }
}

unsafe fn real_vfs() -> *mut ffi::sqlite3_vfs {
    *REAL.get().expect("registered before any open") as *mut ffi::sqlite3_vfs
}

/// The real file behind one of ours.
unsafe fn inner(f: *mut ffi::sqlite3_file) -> *mut ffi::sqlite3_file {
    f.cast::<u8>().add(HEADER).cast()
}

unsafe fn methods(f: *mut ffi::sqlite3_file) -> &'static ffi::sqlite3_io_methods {
    &*(*inner(f)).pMethods
}

unsafe extern "C" fn x_open(
    _vfs: *mut ffi::sqlite3_vfs,
    name: *const c_char,
    file: *mut ffi::sqlite3_file,
    flags: c_int,
    out_flags: *mut c_int,
) -> c_int {
    let head = file.cast::<Counted>();
    (*head).base.pMethods = std::ptr::null();
    (*head).counter = std::ptr::null();
    (*head).dir_sync_pending = false;
    let real = real_vfs();
    let Some(open) = (*real).xOpen else {
        return ffi::SQLITE_CANTOPEN;
    };
    let rc = open(real, name, inner(file), flags, out_flags);
    let m = (*inner(file)).pMethods;
    if m.is_null() {
        return rc;
    }
    // SQLite closes a file whose pMethods is set, even after a failed open.
    let version = (*m).iVersion.clamp(1, 3) as usize;
    (*head).base.pMethods = &METHODS[version - 1];
    if rc == ffi::SQLITE_OK && !name.is_null() {
        (*head).counter = counter_for(CStr::from_ptr(name).to_bytes());
        let kind = flags & 0x0FFF00;
        let journal = [
            ffi::SQLITE_OPEN_MAIN_JOURNAL,
            ffi::SQLITE_OPEN_SUPER_JOURNAL,
            ffi::SQLITE_OPEN_WAL,
        ];
        (*head).dir_sync_pending = flags & ffi::SQLITE_OPEN_CREATE != 0 && journal.contains(&kind);
    }
    rc
}

/// Calls the real file's method `$m` with `$args`, or returns `SQLITE_IOERR` when it has
/// none.
macro_rules! forward {
    ($f:expr, $m:ident $(, $a:expr)*) => {
        match methods($f).$m {
            Some(g) => g(inner($f) $(, $a)*),
            None => ffi::SQLITE_IOERR,
        }
    };
}

unsafe extern "C" fn x_close(f: *mut ffi::sqlite3_file) -> c_int {
    let rc = forward!(f, xClose);
    let head = f.cast::<Counted>();
    if !(*head).counter.is_null() {
        drop(Arc::from_raw((*head).counter));
        (*head).counter = std::ptr::null();
    }
    rc
}

unsafe extern "C" fn x_read(
    f: *mut ffi::sqlite3_file,
    buf: *mut c_void,
    n: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    forward!(f, xRead, buf, n, off)
}

unsafe extern "C" fn x_write(
    f: *mut ffi::sqlite3_file,
    buf: *const c_void,
    n: c_int,
    off: ffi::sqlite3_int64,
) -> c_int {
    forward!(f, xWrite, buf, n, off)
}

unsafe extern "C" fn x_truncate(f: *mut ffi::sqlite3_file, size: ffi::sqlite3_int64) -> c_int {
    forward!(f, xTruncate, size)
}

unsafe extern "C" fn x_sync(f: *mut ffi::sqlite3_file, flags: c_int) -> c_int {
    let rc = forward!(f, xSync, flags);
    if rc == ffi::SQLITE_OK {
        let head = f.cast::<Counted>();
        // unixSync: the file's fsync, then once the directory's.
        let n = 1 + u64::from((*head).dir_sync_pending);
        (*head).dir_sync_pending = false;
        if !(*head).counter.is_null() {
            (*(*head).counter).fetch_add(n, Ordering::Relaxed);
        }
    }
    rc
}

unsafe extern "C" fn x_file_size(f: *mut ffi::sqlite3_file, size: *mut ffi::sqlite3_int64) -> c_int {
    forward!(f, xFileSize, size)
}

unsafe extern "C" fn x_lock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(f, xLock, level)
}

unsafe extern "C" fn x_unlock(f: *mut ffi::sqlite3_file, level: c_int) -> c_int {
    forward!(f, xUnlock, level)
}

unsafe extern "C" fn x_check_reserved_lock(f: *mut ffi::sqlite3_file, out: *mut c_int) -> c_int {
    forward!(f, xCheckReservedLock, out)
}

unsafe extern "C" fn x_file_control(f: *mut ffi::sqlite3_file, op: c_int, arg: *mut c_void) -> c_int {
    forward!(f, xFileControl, op, arg)
}

unsafe extern "C" fn x_sector_size(f: *mut ffi::sqlite3_file) -> c_int {
    match methods(f).xSectorSize {
        Some(g) => g(inner(f)),
        None => 4096,
    }
}

unsafe extern "C" fn x_device_characteristics(f: *mut ffi::sqlite3_file) -> c_int {
    match methods(f).xDeviceCharacteristics {
        Some(g) => g(inner(f)),
        None => 0,
    }
}

unsafe extern "C" fn x_shm_map(
    f: *mut ffi::sqlite3_file,
    region: c_int,
    size: c_int,
    extend: c_int,
    out: *mut *mut c_void,
) -> c_int {
    forward!(f, xShmMap, region, size, extend, out)
}

unsafe extern "C" fn x_shm_lock(f: *mut ffi::sqlite3_file, off: c_int, n: c_int, flags: c_int) -> c_int {
    forward!(f, xShmLock, off, n, flags)
}

unsafe extern "C" fn x_shm_barrier(f: *mut ffi::sqlite3_file) {
    if let Some(g) = methods(f).xShmBarrier {
        g(inner(f));
    }
}

unsafe extern "C" fn x_shm_unmap(f: *mut ffi::sqlite3_file, delete: c_int) -> c_int {
    forward!(f, xShmUnmap, delete)
}

unsafe extern "C" fn x_fetch(
    f: *mut ffi::sqlite3_file,
    off: ffi::sqlite3_int64,
    n: c_int,
    out: *mut *mut c_void,
) -> c_int {
    forward!(f, xFetch, off, n, out)
}

unsafe extern "C" fn x_unfetch(f: *mut ffi::sqlite3_file, off: ffi::sqlite3_int64, p: *mut c_void) -> c_int {
    forward!(f, xUnfetch, off, p)
}

/// The forwarding methods with `iVersion` = `version`: SQLite calls the version-2 and -3
/// methods only when the table says it has them.
const fn table(version: c_int) -> ffi::sqlite3_io_methods {
    ffi::sqlite3_io_methods {
        iVersion: version,
        xClose: Some(x_close),
        xRead: Some(x_read),
        xWrite: Some(x_write),
        xTruncate: Some(x_truncate),
        xSync: Some(x_sync),
        xFileSize: Some(x_file_size),
        xLock: Some(x_lock),
        xUnlock: Some(x_unlock),
        xCheckReservedLock: Some(x_check_reserved_lock),
        xFileControl: Some(x_file_control),
        xSectorSize: Some(x_sector_size),
        xDeviceCharacteristics: Some(x_device_characteristics),
        xShmMap: Some(x_shm_map),
        xShmLock: Some(x_shm_lock),
        xShmBarrier: Some(x_shm_barrier),
        xShmUnmap: Some(x_shm_unmap),
        xFetch: Some(x_fetch),
        xUnfetch: Some(x_unfetch),
    }
}

/// One table per `iVersion` of the real file's methods (1, 2, 3).
static METHODS: [ffi::sqlite3_io_methods; 3] = [table(1), table(2), table(3)];
