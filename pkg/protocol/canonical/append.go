package canonical

// AppendDirect appends Marshal(v) to out when v is made only of the types Marshal writes
// directly (see Marshal), and reports whether it was; when it was not, out is returned
// unchanged and the caller must Marshal a value that encloses v instead. depth is how
// deeply v is nested in the value being written (0 for the value itself), so that the
// limit on nesting applies as if the whole value were given to Marshal.
func AppendDirect(out []byte, v any, depth int) (_ []byte, direct bool, err error) {
	res, direct, err := appendGo(out, v, depth)
	if !direct {
		return out, false, nil
	}
	return res, true, err
}
