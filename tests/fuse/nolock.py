#!/usr/bin/python3
"""A FUSE filesystem that mirrors a directory but cannot lock files: every fcntl lock
request fails with ENOLCK ("No locks available"), as on an NFS mount whose lock manager
is unreachable or a 9p or FUSE mount whose server refuses locks. Used by tests/store.rs
to put a result database where SQLite's locking fails.

Usage: nolock.py BACKING_DIR MOUNTPOINT (as root; runs in the background until unmounted).
Needs python3-fuse (Debian). Based on the package's example xmp.py."""

import errno
import os
import sys

import fuse
from fuse import Fuse

fuse.fuse_python_api = (0, 2)


class NoLock(Fuse):
    def __init__(self, backing, *args, **kw):
        Fuse.__init__(self, *args, **kw)
        self.backing = backing

    def fsinit(self):
        os.chdir(self.backing)

    def getattr(self, path):
        return os.lstat("." + path)

    def readdir(self, path, offset):
        for e in [".", ".."] + os.listdir("." + path):
            yield fuse.Direntry(e)

    def unlink(self, path):
        os.unlink("." + path)

    def rmdir(self, path):
        os.rmdir("." + path)

    def mkdir(self, path, mode):
        os.mkdir("." + path, mode)

    def rename(self, path, path1):
        os.rename("." + path, "." + path1)

    def chmod(self, path, mode):
        os.chmod("." + path, mode)

    def chown(self, path, user, group):
        os.chown("." + path, user, group)

    def truncate(self, path, length):
        os.truncate("." + path, length)

    def utime(self, path, times):
        os.utime("." + path, times)

    def access(self, path, mode):
        if not os.access("." + path, mode):
            return -errno.EACCES

    def statfs(self):
        return os.statvfs(".")

    class File(object):
        def __init__(self, path, flags, *mode):
            self.fd = os.open("." + path, flags, *mode)

        def read(self, length, offset):
            return os.pread(self.fd, length, offset)

        def write(self, buf, offset):
            return os.pwrite(self.fd, buf, offset)

        def release(self, flags):
            os.close(self.fd)

        def flush(self):
            os.close(os.dup(self.fd))

        def fsync(self, isfsyncfile):
            os.fsync(self.fd)

        def fgetattr(self):
            return os.fstat(self.fd)

        def ftruncate(self, length):
            os.ftruncate(self.fd, length)

        def lock(self, cmd, owner, **kw):
            return -errno.ENOLCK

    def main(self, *a, **kw):
        self.file_class = self.File
        return Fuse.main(self, *a, **kw)


def main():
    backing, mountpoint = sys.argv[1], sys.argv[2]
    server = NoLock(os.path.abspath(backing), dash_s_do="setsingle")
    server.multithreaded = False
    server.fuse_args.mountpoint = mountpoint
    server.fuse_args.add("fsname=fsarena-nolock")
    server.main()


if __name__ == "__main__":
    main()
