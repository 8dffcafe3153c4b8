// Package wrongsig compiles, but its New does not take the database.
package wrongsig

import "context"

type Shop struct{}

func New() *Shop { return &Shop{} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) { return nil, nil }
