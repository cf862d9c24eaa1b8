package sqlitefile

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
)

// The write-ahead log: a 32-byte header, then frames of a 24-byte header and a page. A
// frame counts when it carries the header's salts and its checksum, which runs on from
// the frame before it (the header's for the first), matches; the log ends at the first
// frame that does not. Of the frames that count, those up to the last commit frame (one
// whose header gives the database's size after the commit) are committed: the pages a
// reader takes from the log.

const (
	walHeader   = 32
	frameHeader = 24
	walMagicLE  = 0x377f0682 // checksums over little-endian words
	walMagicBE  = 0x377f0683 // checksums over big-endian words
	walVersion  = 3007000
)

// readWAL records the committed frames of the log at path; a missing or empty log, or
// one whose header does not verify, has none, as for SQLite.
func (f *File) readWAL(path string) error {
	wal, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	r := bufio.NewReaderSize(io.NewSectionReader(wal, 0, 1<<62), 1<<20)
	var h [walHeader]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		_ = wal.Close()
		return endOfLog(err) // shorter than a header: no frames
	}
	magic := binary.BigEndian.Uint32(h[0:])
	if magic != walMagicLE && magic != walMagicBE {
		_ = wal.Close()
		return nil
	}
	order := binary.ByteOrder(binary.LittleEndian)
	if magic == walMagicBE {
		order = binary.BigEndian
	}
	s0, s1 := checksum(order, h[:24], 0, 0)
	if s0 != binary.BigEndian.Uint32(h[24:]) || s1 != binary.BigEndian.Uint32(h[28:]) {
		// A header being written: the log is restarted only once every frame is in the
		// database file, so the file is current.
		_ = wal.Close()
		return nil
	}
	if v, size := binary.BigEndian.Uint32(h[4:]), int(binary.BigEndian.Uint32(h[8:])); v != walVersion || size != f.pageSize {
		// A whole header this reader does not know: SQLite decides what it means.
		_ = wal.Close()
		return fmt.Errorf("%w: a write-ahead log of version %d and %d-byte pages", ErrCorrupt, v, size)
	}
	copy(f.salt[:], h[16:24])
	f.frames = make(map[uint32]int64)
	pending := make(map[uint32]int64)
	frame := make([]byte, frameHeader+f.pageSize)
	for off := int64(walHeader); ; off += int64(len(frame)) {
		if _, err := io.ReadFull(r, frame); err != nil {
			if err := endOfLog(err); err != nil {
				_ = wal.Close()
				return err
			}
			break // the log ends, or a frame is being written
		}
		page, commit := binary.BigEndian.Uint32(frame[0:]), binary.BigEndian.Uint32(frame[4:])
		if page == 0 || [8]byte(frame[8:16]) != f.salt {
			break
		}
		s0, s1 = checksum(order, frame[:8], s0, s1)
		s0, s1 = checksum(order, frame[frameHeader:], s0, s1)
		if s0 != binary.BigEndian.Uint32(frame[16:]) || s1 != binary.BigEndian.Uint32(frame[20:]) {
			break
		}
		pending[page] = off
		if commit != 0 {
			for p, o := range pending {
				f.frames[p] = o
			}
			clear(pending)
			f.pages = commit
		}
	}
	f.wal = wal
	if len(f.frames) == 0 {
		f.wal, f.frames = nil, nil
		return wal.Close()
	}
	for p := range f.frames {
		if p > f.pages {
			delete(f.frames, p) // truncated away by a later commit
		}
	}
	if f.pages == 0 {
		return fmt.Errorf("%w: the log commits an empty database", ErrCorrupt)
	}
	return nil
}

// endOfLog is nil for an error that means the log ends there, and the error otherwise: a
// log that cannot be read is not an empty one, and its pages are not the file's.
func endOfLog(err error) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return nil
	}
	return fmt.Errorf("sqlitefile: read the write-ahead log: %w", err)
}

// checksum runs the log's checksum over b (a multiple of 8 bytes) from s0, s1.
func checksum(order binary.ByteOrder, b []byte, s0, s1 uint32) (uint32, uint32) {
	for i := 0; i+8 <= len(b); i += 8 {
		s0 += order.Uint32(b[i:]) + s1
		s1 += order.Uint32(b[i+4:]) + s0
	}
	return s0, s1
}
