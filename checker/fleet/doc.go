// Package fleet is the Redis world every Redis case plays its scenes in,
// as net/http/httptest is the server of HTTP tests: the checks of cases
// 6, 8, 9, 10 and 11 start shop instances on it and keep only their own
// scenes, checks and invariants.
//
// A World is one Redis: a fresh embedded miniredis, whose clock moves only
// when the checker moves it, or a namespace of its own on a real server
// (REDIS_URL), whose keys the World holds still in the scene's time (see
// World.Advance). Every instance's client goes through a Tap, which logs
// the commands it sends, can hold one until the checker lets it go (or
// all of them, Pause), fail one, and puts each key under the World's
// namespace; faults.go lists the faults a scene can stage. A Clock is the shops' clock:
// it stands still until the checker moves it. A Stage ties a World and a
// Clock to a harness: it waits for the process to come to rest, and moves
// Redis's clock and the shops' together (Settle, Drive, Elapse).
//
// Time in a scene is virtual. Nothing here decides by the wall clock but
// the hang bound, which only turns a scene that never comes to rest into a
// *harness.Stuck error.
package fleet
