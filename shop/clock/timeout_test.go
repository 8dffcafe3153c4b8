package clock

import (
	"context"
	"errors"
	"testing"
	"time"
)

func TestWithTimeoutEndsWhenTheClockPasses(t *testing.T) {
	f := NewFake(time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC))
	ctx, cancel := WithTimeout(context.Background(), f, time.Second)
	defer cancel()
	for f.Sleepers() == 0 {
		time.Sleep(time.Millisecond)
	}
	select {
	case <-ctx.Done():
		t.Fatal("ended before the clock moved")
	default:
	}
	f.Advance(time.Second)
	<-ctx.Done()
	if !errors.Is(context.Cause(ctx), context.DeadlineExceeded) {
		t.Fatalf("cause %v, want DeadlineExceeded", context.Cause(ctx))
	}
}

func TestWithTimeoutCancelEndsTheSleeper(t *testing.T) {
	f := NewFake(time.Date(2025, 3, 3, 9, 0, 0, 0, time.UTC))
	_, cancel := WithTimeout(context.Background(), f, time.Second)
	for f.Sleepers() == 0 {
		time.Sleep(time.Millisecond)
	}
	cancel()
	for f.Sleepers() != 0 {
		time.Sleep(time.Millisecond)
	}
}
