// Package sqlitefile reads the rows of a table straight from a SQLite database file and
// its write-ahead log, by the file format (https://www.sqlite.org/fileformat2.html),
// without the SQL engine. It exists for one job: a full verification of a chain reads
// every row once, in rowid order, and the pure-Go SQLite spends most of that time in its
// virtual machine, its mutexes and its copies; reading the B-tree's pages here costs a
// fraction of it (docs/BENCHMARKS.md).
//
// It reads, it never writes, and it trusts nothing it reads: a page that does not parse is
// ErrCorrupt, never a panic or an endless walk. Which version of a page it reads is what
// makes it safe: a page the write-ahead log holds a committed frame of is read from the
// log (the last such frame), any other from the database file, as SQLite itself does. The
// caller holds a read transaction on the database, through SQLite, from before Open until
// the last read: that keeps SQLite's checkpointer from writing into the database file the
// pages a read would take from it. The log itself may still be restarted (overwritten from
// its start) by a writer once every frame is in the database file; a read from the log
// checks that the frame still carries the salts it was found with, and otherwise fails with
// ErrChanged, after which the caller reads the rest through SQL.
package sqlitefile

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// ErrCorrupt means the file is not a well-formed SQLite database here: a read through
// SQLite says what it makes of it.
var ErrCorrupt = errors.New("sqlitefile: malformed database page")

// ErrChanged means the write-ahead log was restarted while the file was read.
var ErrChanged = errors.New("sqlitefile: the write-ahead log changed while it was read")

// headerMagic opens every SQLite 3 database file.
const headerMagic = "SQLite format 3\x00"

// A File is an open database file and the committed frames of its write-ahead log. Its
// methods may be called from several goroutines; each Cursor belongs to one.
type File struct {
	db, wal  *os.File
	pageSize int
	usable   int    // pageSize minus the bytes reserved at the end of each page
	pages    uint32 // the database's size in pages, as of the last commit read
	inFile   uint32 // how many pages the database file held when it was opened
	size     int64  // pages × pageSize: no payload is longer
	frames   map[uint32]int64
	salt     [8]byte // the log header's salts, which each of its frames carries
}

// Open opens the database at path and reads its write-ahead log, if it has one, up to its
// last valid commit. The caller holds a read transaction on it (see the package comment).
func Open(path string) (*File, error) {
	db, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	f := &File{db: db}
	if err := f.readHeader(path); err != nil {
		_ = f.Close()
		return nil, err
	}
	return f, nil
}

// Close closes the files.
func (f *File) Close() error {
	err := f.db.Close()
	if f.wal != nil {
		err = errors.Join(err, f.wal.Close())
	}
	return err
}

// readHeader reads the database header and, in WAL mode, the log.
func (f *File) readHeader(path string) error {
	var h [100]byte
	if _, err := f.db.ReadAt(h[:], 0); err != nil {
		return fmt.Errorf("sqlitefile: read the header: %w", err)
	}
	if !bytes.Equal(h[:16], []byte(headerMagic)) {
		return fmt.Errorf("sqlitefile: %s is not a SQLite 3 database", path)
	}
	f.pageSize = int(binary.BigEndian.Uint16(h[16:]))
	if f.pageSize == 1 {
		f.pageSize = 65536
	}
	if f.pageSize < 512 || f.pageSize&(f.pageSize-1) != 0 {
		return fmt.Errorf("%w: page size %d", ErrCorrupt, f.pageSize)
	}
	f.usable = f.pageSize - int(h[20])
	if f.usable < 480 {
		return fmt.Errorf("%w: %d usable bytes a page", ErrCorrupt, f.usable)
	}
	if enc := binary.BigEndian.Uint32(h[56:]); enc != 1 && enc != 0 {
		return fmt.Errorf("sqlitefile: text encoding %d: only UTF-8 is read", enc)
	}
	st, err := f.db.Stat()
	if err != nil {
		return err
	}
	f.inFile = uint32(min(st.Size()/int64(f.pageSize), 1<<32-1))
	f.pages = f.inFile
	if binary.BigEndian.Uint32(h[24:]) == binary.BigEndian.Uint32(h[92:]) { // the in-header size is valid
		if n := binary.BigEndian.Uint32(h[28:]); n > 0 {
			f.pages = n
		}
	}
	if h[18] == 2 && h[19] == 2 { // WAL mode
		if err := f.readWAL(path + "-wal"); err != nil {
			return err
		}
	}
	f.size = int64(f.pages) * int64(f.pageSize)
	return nil
}

// readPage reads page n into buf (pageSize bytes).
func (f *File) readPage(n uint32, buf []byte) error {
	if n == 0 || n > f.pages {
		return fmt.Errorf("%w: page %d of %d", ErrCorrupt, n, f.pages)
	}
	off, inLog := f.frames[n]
	if !inLog {
		return readFull(f.db, buf, int64(n-1)*int64(f.pageSize))
	}
	if err := readFull(f.wal, buf, off+frameHeader); err != nil {
		return err
	}
	// Read after the page: a restart writes a frame's header before its page, so a page
	// overwritten under the read above shows here as other salts.
	var salt [8]byte
	if err := readFull(f.wal, salt[:], off+8); err != nil {
		return err
	}
	if salt != f.salt {
		return ErrChanged
	}
	return nil
}

// readFull reads len(buf) bytes at off; a short file is ErrCorrupt.
func readFull(r io.ReaderAt, buf []byte, off int64) error {
	n, err := r.ReadAt(buf, off)
	if n == len(buf) {
		return nil
	}
	if err == io.EOF || err == nil {
		return fmt.Errorf("%w: the file ends inside page at offset %d", ErrCorrupt, off)
	}
	return err
}

// aheadBytes is how much of the database file a cursor reads at once. The pages of a
// table written in rowid order lie mostly in order in the file, so one read brings the
// next pages a walk needs: a system call per page was a fifth of a full verification.
const aheadBytes = 128 << 10

// readAhead holds the pages of the database file a cursor read last.
type readAhead struct {
	buf   []byte
	first uint32 // the page buf begins with
	pages uint32 // how many pages buf holds
}

// readPage reads page n into buf, through the cursor's read-ahead for a page the log
// does not hold.
func (c *Cursor) readPage(n uint32, buf []byte) error {
	f, a := c.f, &c.ahead
	if _, inLog := f.frames[n]; inLog || n == 0 || n > f.pages || n > f.inFile {
		return f.readPage(n, buf)
	}
	if n < a.first || n >= a.first+a.pages {
		if a.buf == nil {
			a.buf = make([]byte, max(aheadBytes, f.pageSize))
		}
		count := min(uint32(len(a.buf)/f.pageSize), min(f.pages, f.inFile)-n+1)
		a.first, a.pages = n, 0
		if err := readFull(f.db, a.buf[:int(count)*f.pageSize], int64(n-1)*int64(f.pageSize)); err != nil {
			return err
		}
		a.pages = count
	}
	off := int(n-a.first) * f.pageSize
	copy(buf, a.buf[off:off+f.pageSize])
	return nil
}
