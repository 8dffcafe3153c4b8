package main

import (
	"context"
	"fmt"
	"net"
	"net/url"
	"time"
)

// redisDial is how long the probe waits for a Redis server to answer.
const redisDial = 3 * time.Second

// probeRedis makes sure the server that raw names answers before any case
// runs: an unreachable server is one set-up mistake, not eight failed
// checks and a hint to read the chapter. from says where raw came from
// (--redis, or $REDIS_URL), for the error.
func probeRedis(ctx context.Context, raw, from string) error {
	u, err := url.Parse(raw)
	if err != nil || (u.Scheme != "redis" && u.Scheme != "rediss") || u.Host == "" {
		return usagef("%s %s is not a Redis URL: give redis://HOST:PORT/DB, such as redis://localhost:6379/0", from, raw)
	}
	addr := u.Host
	if u.Port() == "" {
		addr = net.JoinHostPort(u.Hostname(), "6379")
	}
	d := net.Dialer{Timeout: redisDial}
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return fmt.Errorf("cannot reach Redis at %s (%s): start the server, or leave out %s to use the embedded one", addr, from, from)
	}
	return conn.Close()
}
