// Package slowloris is a hostile HTTP/1.1 client for tests: it sends a request's headers,
// or its body, a byte at a time, and reports how long the server took to cut it off. A
// server without read timeouts keeps such connections, and enough of them, open forever.
package slowloris

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// never is how long a trickle would take to finish: the server must cut it off first.
const never = 10 * time.Minute

// Headers opens a connection to addr and sends a GET of path a byte every interval,
// headers included, never ending them. It returns how long the server kept the
// connection before closing it, and an error if it did not within limit.
func Headers(addr, path string, interval, limit time.Duration) (time.Duration, error) {
	request := "GET " + path + " HTTP/1.1\r\nHost: " + addr + "\r\nUser-Agent: slowloris\r\n"
	for len(request)*int(interval) < int(never) {
		request += "X-Padding: " + strconv.Itoa(len(request)) + "\r\n"
	}
	return trickle(addr, "", request, interval, limit)
}

// Body opens a connection to addr and sends a POST of path with complete headers (the
// given Content-Type, and a Content-Length of a body that would take ten minutes), then
// trickles the body a byte every interval. It returns how long the server kept the
// connection before closing it (whatever it answered), and an error if it did not within
// limit.
func Body(addr, path, contentType string, interval, limit time.Duration) (time.Duration, error) {
	n := int(never / interval)
	head := fmt.Sprintf("POST %s HTTP/1.1\r\nHost: %s\r\nContent-Type: %s\r\nContent-Length: %d\r\n\r\n", path, addr, contentType, n)
	body := make([]byte, n)
	for i := range body {
		body[i] = '{'
	}
	return trickle(addr, head, string(body), interval, limit)
}

func isTimeout(err error) bool {
	ne, ok := errors.AsType[net.Error](err)
	return ok && ne.Timeout()
}

// trickle sends head at once, then slow a byte every interval, until the server closes
// the connection (a write fails or a read ends) or limit passes.
func trickle(addr, head, slow string, interval, limit time.Duration) (time.Duration, error) {
	start := time.Now()
	conn, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return 0, err
	}
	defer func() { _ = conn.Close() }()
	if err := conn.SetDeadline(start.Add(limit)); err != nil {
		return 0, err
	}
	if _, err := io.WriteString(conn, head); err != nil {
		return 0, fmt.Errorf("send the headers: %w", err)
	}
	// The server's closing shows as the end of the read (not at our own deadline), or as
	// a failed write.
	closed := make(chan error, 1)
	go func() {
		_, err := io.Copy(io.Discard, conn)
		closed <- err
	}()
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for i := 0; i < len(slow) && time.Since(start) < limit; i++ {
		select {
		case err := <-closed:
			if isTimeout(err) {
				return time.Since(start), errors.New("the server kept a trickling connection until the limit")
			}
			return time.Since(start), nil
		case <-tick.C:
		}
		if _, err := conn.Write([]byte{slow[i]}); err != nil {
			if isTimeout(err) {
				break
			}
			return time.Since(start), nil
		}
	}
	return time.Since(start), fmt.Errorf("the server kept a trickling connection for %v", time.Since(start).Round(time.Millisecond))
}

// Idle opens a connection to addr, sends one complete GET of path, reads the answer and
// then sends nothing more: it returns how long after the answer the server closed the
// idle connection, and an error if it did not within limit. The answer's status is
// returned too.
func Idle(addr, path string, limit time.Duration) (time.Duration, int, error) {
	conn, err := net.DialTimeout("tcp", addr, limit)
	if err != nil {
		return 0, 0, err
	}
	defer func() { _ = conn.Close() }()
	if err := conn.SetDeadline(time.Now().Add(2 * limit)); err != nil {
		return 0, 0, err
	}
	if _, err := io.WriteString(conn, "GET "+path+" HTTP/1.1\r\nHost: "+addr+"\r\n\r\n"); err != nil {
		return 0, 0, err
	}
	r := bufio.NewReader(conn)
	resp, err := http.ReadResponse(r, nil)
	if err != nil {
		return 0, 0, fmt.Errorf("read the answer: %w", err)
	}
	if _, err := io.Copy(io.Discard, resp.Body); err != nil {
		return 0, resp.StatusCode, err
	}
	_ = resp.Body.Close()
	answered := time.Now()
	if err := conn.SetDeadline(answered.Add(limit)); err != nil {
		return 0, resp.StatusCode, err
	}
	_, err = io.Copy(io.Discard, r)
	if isTimeout(err) {
		return time.Since(answered), resp.StatusCode, fmt.Errorf("the server kept an idle connection for %v", limit)
	}
	return time.Since(answered), resp.StatusCode, nil
}
