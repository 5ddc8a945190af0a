//! A recorded target: the filesystem under test on a loop device whose backing file
//! fsarena serves itself through FUSE, logging every write and flush that reaches it
//! ([`log`]), so that the disk's state at a power cut can be rebuilt afterwards.

pub mod log;
pub mod states;
pub mod check;
