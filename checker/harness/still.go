package harness

// Still waits as Settled does. It was written when Settled counted the
// runtime's own "semacquire" waits as parked; stack.Parked no longer does,
// so the two are the same, and Still is kept for the cases that call it.
func (h *H) Still(ready func() bool) error { return h.Settled(ready) }

// Still waits as Settle does.
func (c *Crowd[T]) Still() error { return c.Settle() }
