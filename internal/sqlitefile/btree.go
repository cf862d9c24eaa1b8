package sqlitefile

import (
	"encoding/binary"
	"fmt"
)

// A table is a B-tree of pages: interior pages (flag 5) hold child page numbers with the
// largest rowid of each child's subtree, and a right-most child; leaf pages (flag 13) hold
// the rows, each a rowid and a record (its payload), whose end spills into a list of
// overflow pages when it does not fit.

const (
	pageTableInterior = 0x05
	pageTableLeaf     = 0x0d
	// maxDepth bounds a walk down the tree: a tree of pages of 512 bytes holding a few
	// children each would need more than this many levels for 2^63 rows, so a deeper walk
	// is a loop in a malformed file.
	maxDepth = 64
)

// A Cursor walks a table's rows in rowid order. It is not safe for concurrent use.
type Cursor struct {
	f       *File
	stack   []level // the interior pages from the root down to the leaf's parent
	leaf    level
	bufs    [][]byte // a page buffer for each depth (see load)
	ahead   readAhead
	rowid   int64
	payload []byte
	spill   []byte // the payload of a row that overflows its page
	ovf     []byte // an overflow page
	err     error
}

// level is a page of the walk and where the walk is in it: for an interior page, the
// child it went down to (the cell count for the right-most child); for the leaf, its
// current cell.
type level struct {
	buf   []byte
	hdr   int // offset of the page header: 100 on page 1, 0 elsewhere
	cells int
	at    int
}

// Seek returns a cursor on the table whose root page is root, before its first row whose
// rowid is at least rowid: its first Next moves to that row.
func (f *File) Seek(root uint32, rowid int64) (*Cursor, error) {
	c := &Cursor{f: f, ovf: make([]byte, f.pageSize)}
	page := root
	for depth := 0; ; depth++ {
		if depth == maxDepth {
			return nil, fmt.Errorf("%w: the tree is deeper than %d pages", ErrCorrupt, maxDepth)
		}
		l, err := c.load(page, len(c.stack))
		if err != nil {
			return nil, err
		}
		if l.buf[l.hdr] == pageTableLeaf {
			c.leaf = l
			c.leaf.at = -1
			for i := range l.cells { // rows before rowid are skipped
				id, err := c.leafRowid(i)
				if err != nil {
					return nil, err
				}
				if id >= rowid {
					break
				}
				c.leaf.at = i
			}
			return c, nil
		}
		// The first child whose largest rowid is at least rowid, else the right-most.
		l.at = l.cells
		for i := range l.cells {
			key, err := interiorKey(l, i)
			if err != nil {
				return nil, err
			}
			if key >= rowid {
				l.at = i
				break
			}
		}
		c.stack = append(c.stack, l)
		if page, err = child(l); err != nil {
			return nil, err
		}
	}
}

// Next moves to the next row, and reports false at the end of the table or on an error
// (Err).
func (c *Cursor) Next() bool {
	if c.err != nil {
		return false
	}
	for c.leaf.at+1 >= c.leaf.cells {
		if !c.nextLeaf() {
			return false
		}
	}
	c.leaf.at++
	c.err = c.readCell()
	return c.err == nil
}

// Rowid is the current row's rowid.
func (c *Cursor) Rowid() int64 { return c.rowid }

// Payload is the current row's record, valid until the next call of Next.
func (c *Cursor) Payload() []byte { return c.payload }

// Err is the error that stopped Next, if any.
func (c *Cursor) Err() error { return c.err }

// nextLeaf moves to the first cell (before it) of the leaf after the current one.
func (c *Cursor) nextLeaf() bool {
	for len(c.stack) > 0 {
		top := &c.stack[len(c.stack)-1]
		if top.at >= top.cells {
			c.stack = c.stack[:len(c.stack)-1]
			continue
		}
		top.at++
		page, err := child(*top)
		if err != nil {
			c.err = err
			return false
		}
		// Down the left-most children to a leaf.
		for {
			if len(c.stack) >= maxDepth {
				c.err = fmt.Errorf("%w: the tree is deeper than %d pages", ErrCorrupt, maxDepth)
				return false
			}
			l, err := c.load(page, len(c.stack))
			if err != nil {
				c.err = err
				return false
			}
			if l.buf[l.hdr] == pageTableLeaf {
				c.leaf = l
				c.leaf.at = -1
				return true
			}
			l.at = 0
			c.stack = append(c.stack, l)
			if page, err = child(l); err != nil {
				c.err = err
				return false
			}
		}
	}
	return false
}

// load reads page n, met at depth in the walk, and checks its header. Each depth has a
// buffer of its own, so the interior pages of the walk stay as they are; a leaf takes its
// depth's buffer and gives that depth the previous leaf's.
func (c *Cursor) load(n uint32, depth int) (level, error) {
	for len(c.bufs) <= depth {
		c.bufs = append(c.bufs, make([]byte, c.f.pageSize))
	}
	buf := c.bufs[depth]
	if err := c.readPage(n, buf); err != nil {
		return level{}, err
	}
	l := level{buf: buf}
	if n == 1 {
		l.hdr = 100
	}
	kind := buf[l.hdr]
	if kind != pageTableLeaf && kind != pageTableInterior {
		return level{}, fmt.Errorf("%w: page %d is not a table page (flag %#x)", ErrCorrupt, n, kind)
	}
	l.cells = int(binary.BigEndian.Uint16(buf[l.hdr+3:]))
	if cellPointers(l)+2*l.cells > c.f.usable {
		return level{}, fmt.Errorf("%w: page %d claims %d cells", ErrCorrupt, n, l.cells)
	}
	if kind == pageTableLeaf {
		c.bufs[depth] = c.leaf.buf
		if c.bufs[depth] == nil {
			c.bufs[depth] = make([]byte, c.f.pageSize)
		}
	}
	return l, nil
}

// cellPointers is the offset of l's cell pointer array.
func cellPointers(l level) int {
	if l.buf[l.hdr] == pageTableInterior {
		return l.hdr + 12
	}
	return l.hdr + 8
}

// cell is the offset of cell i of l.
func (c *Cursor) cell(l level, i int) (int, error) {
	off := int(binary.BigEndian.Uint16(l.buf[cellPointers(l)+2*i:]))
	if off < cellPointers(l)+2*l.cells || off >= c.f.usable {
		return 0, fmt.Errorf("%w: cell %d at offset %d", ErrCorrupt, i, off)
	}
	return off, nil
}

// child is the page number of the child of interior page l that l.at names.
func child(l level) (uint32, error) {
	var off int
	if l.at == l.cells {
		off = l.hdr + 8
	} else {
		off = int(binary.BigEndian.Uint16(l.buf[cellPointers(l)+2*l.at:]))
		if off < cellPointers(l)+2*l.cells || off+4 > len(l.buf) {
			return 0, fmt.Errorf("%w: interior cell at offset %d", ErrCorrupt, off)
		}
	}
	return binary.BigEndian.Uint32(l.buf[off:]), nil
}

// interiorKey is the rowid of interior page l's cell i: the largest in its left child.
func interiorKey(l level, i int) (int64, error) {
	off := int(binary.BigEndian.Uint16(l.buf[cellPointers(l)+2*i:]))
	if off+4 >= len(l.buf) {
		return 0, fmt.Errorf("%w: interior cell at offset %d", ErrCorrupt, off)
	}
	key, n := varint(l.buf[off+4:])
	if n == 0 {
		return 0, fmt.Errorf("%w: interior cell at offset %d", ErrCorrupt, off)
	}
	return int64(key), nil
}

// leafRowid is the rowid of the leaf's cell i.
func (c *Cursor) leafRowid(i int) (int64, error) {
	off, err := c.cell(c.leaf, i)
	if err != nil {
		return 0, err
	}
	_, n := varint(c.leaf.buf[off:c.f.usable])
	if n == 0 {
		return 0, fmt.Errorf("%w: leaf cell at offset %d", ErrCorrupt, off)
	}
	id, m := varint(c.leaf.buf[off+n : c.f.usable])
	if m == 0 {
		return 0, fmt.Errorf("%w: leaf cell at offset %d", ErrCorrupt, off)
	}
	return int64(id), nil
}

// readCell reads the leaf's current cell: its rowid and payload, with the overflow pages
// of a payload that does not fit.
func (c *Cursor) readCell() error {
	page := c.leaf.buf[:c.f.usable]
	off, err := c.cell(c.leaf, c.leaf.at)
	if err != nil {
		return err
	}
	size, n := varint(page[off:])
	if n == 0 {
		return fmt.Errorf("%w: leaf cell at offset %d", ErrCorrupt, off)
	}
	off += n
	id, n := varint(page[off:])
	if n == 0 {
		return fmt.Errorf("%w: leaf cell at offset %d", ErrCorrupt, off)
	}
	off += n
	c.rowid = int64(id)
	if size > uint64(c.f.size) {
		return fmt.Errorf("%w: a payload of %d bytes in a file of %d", ErrCorrupt, size, c.f.size)
	}
	local := localPayload(int(size), c.f.usable)
	if off+local > len(page) {
		return fmt.Errorf("%w: a cell runs past its page", ErrCorrupt)
	}
	if local == int(size) {
		c.payload = page[off : off+local]
		return nil
	}
	if off+local+4 > len(page) {
		return fmt.Errorf("%w: a cell runs past its page", ErrCorrupt)
	}
	c.spill = append(c.spill[:0], page[off:off+local]...)
	next := binary.BigEndian.Uint32(page[off+local:])
	for rest := int(size) - local; rest > 0; {
		if next == 0 {
			return fmt.Errorf("%w: an overflow list ends %d bytes early", ErrCorrupt, rest)
		}
		if err := c.readPage(next, c.ovf); err != nil {
			return err
		}
		chunk := min(rest, c.f.usable-4)
		c.spill = append(c.spill, c.ovf[4:4+chunk]...)
		rest -= chunk
		next = binary.BigEndian.Uint32(c.ovf)
	}
	c.payload = c.spill
	return nil
}

// localPayload is how many bytes of a table leaf cell's payload of size bytes its page
// holds (the file format's rule); the rest is in overflow pages.
func localPayload(size, usable int) int {
	maxLocal := usable - 35
	if size <= maxLocal {
		return size
	}
	minLocal := (usable-12)*32/255 - 23
	k := minLocal + (size-minLocal)%(usable-4)
	if k <= maxLocal {
		return k
	}
	return minLocal
}

// varint decodes a SQLite varint (big-endian, 7 bits a byte, 8 in a ninth) and its
// length; the length is 0 when b ends inside it.
func varint(b []byte) (uint64, int) {
	var v uint64
	for i := 0; i < 8; i++ {
		if i >= len(b) {
			return 0, 0
		}
		v = v<<7 | uint64(b[i]&0x7f)
		if b[i] < 0x80 {
			return v, i + 1
		}
	}
	if len(b) < 9 {
		return 0, 0
	}
	return v<<8 | uint64(b[8]), 9
}
