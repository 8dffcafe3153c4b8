// The student made the case a program to try it out.
package main

import (
	"context"
	"fmt"

	"stampede/shop/catalog"
)

type Shop struct{ db *catalog.DB }

func New(db *catalog.DB) *Shop { return &Shop{db: db} }

func (s *Shop) Top(ctx context.Context, shelf string) ([]string, error) {
	return s.db.Top(ctx, shelf)
}

func main() { fmt.Println("try me") }
