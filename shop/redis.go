package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"
)

// probeRedis makes sure the server that --redis names answers before any
// check runs: an unreachable server is one set-up mistake, not eight failed
// checks and a hint to read the chapter.
func probeRedis(ctx context.Context, raw string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return usagef("--redis %s is not a Redis URL: give redis://HOST:PORT/DB, such as redis://localhost:6379/0", raw)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "6379")
	}
	d := net.Dialer{Timeout: 5 * time.Second}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot reach Redis at %s (%v): start the server, or leave out --redis to check on the embedded one", addr, err)
	}
	return conn.Close()
}
