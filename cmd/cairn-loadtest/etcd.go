package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os/exec"
	"strconv"
	"strings"
	"time"
)

// etcdSize is what etcd's database takes: the file, the part of it that holds data
// (bbolt keeps the pages a compaction frees and reuses them, so the file only shrinks
// when defragmented) and the data directory with its write-ahead log.
type etcdSize struct {
	file, inUse, dir int64
}

// etcdSize asks etcd's maintenance API for its database's size and in-use size, and du
// for its data directory's (the write-ahead log's segments are preallocated 64 MiB at a
// time).
func (f *federation) etcdSize(ctx context.Context) (etcdSize, error) {
	var st struct {
		DBSize      string `json:"dbSize"`
		DBSizeInUse string `json:"dbSizeInUse"`
	}
	if err := f.etcdCall(ctx, "status", &st); err != nil {
		return etcdSize{}, err
	}
	var sz etcdSize
	var err error
	if sz.file, err = strconv.ParseInt(st.DBSize, 10, 64); err != nil {
		return etcdSize{}, fmt.Errorf("etcd status: dbSize %q: %w", st.DBSize, err)
	}
	if sz.inUse, err = strconv.ParseInt(st.DBSizeInUse, 10, 64); err != nil {
		return etcdSize{}, fmt.Errorf("etcd status: dbSizeInUse %q: %w", st.DBSizeInUse, err)
	}
	out, err := exec.CommandContext(ctx, "du", "-sb", f.etcd).Output()
	if err != nil {
		return etcdSize{}, fmt.Errorf("du %s: %w", f.etcd, err)
	}
	n, _, _ := strings.Cut(string(out), "\t")
	if sz.dir, err = strconv.ParseInt(n, 10, 64); err != nil {
		return etcdSize{}, fmt.Errorf("du %s: %q: %w", f.etcd, n, err)
	}
	return sz, nil
}

// defragment has etcd give the pages its compactions freed back to the file system, as
// an etcd operator's routine maintenance does; etcd stops serving while it runs.
func (f *federation) defragment(ctx context.Context) error {
	return f.etcdCall(ctx, "defragment", nil)
}

// etcdCall posts an empty request to etcd's maintenance API (its gRPC gateway) and
// decodes the answer into out, when out is not nil.
func (f *federation) etcdCall(ctx context.Context, method string, out any) error {
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	url := f.env.EtcdURL() + "/v3/maintenance/" + method
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url, bytes.NewReader([]byte("{}")))
	if err != nil {
		return err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return fmt.Errorf("etcd %s: %w", method, err)
	}
	defer func() { _ = resp.Body.Close() }()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return fmt.Errorf("etcd %s: %w", method, err)
	}
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("etcd %s: %s: %s", method, resp.Status, bytes.TrimSpace(body))
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("etcd %s: %w", method, err)
	}
	return nil
}
