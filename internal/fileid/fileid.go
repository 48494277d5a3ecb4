// Package fileid reads from an fs.FileInfo what tells a file on disk apart beyond its name,
// size and modification time: its inode number, its count of hard links and its change time,
// where the system keeps them (Unix). Elsewhere (Windows) they read as unknown: inode and change
// time zero, one link; callers treat zero as "not known" and compare nothing.
package fileid
