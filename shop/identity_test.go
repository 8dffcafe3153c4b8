package main

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestWhoIsGradedComesFromTheCIThenGit(t *testing.T) {
	ctx := context.Background()
	env := map[string]string{"GITHUB_ACTOR": "ada-l", "USER": "runner"}
	assert.Equal(t, Person{Name: "ada-l", Source: "GITHUB_ACTOR"}, whoIsHere(ctx, t.TempDir(), func(k string) string { return env[k] }))

	// Not a clone and no CI: git has nothing to say, so the account names
	// the student (unless a global git config does).
	delete(env, "GITHUB_ACTOR")
	p := whoIsHere(ctx, t.TempDir(), func(k string) string { return env[k] })
	assert.Contains(t, []string{"git config", "account"}, p.Source)
	if p.Source == "account" {
		assert.Equal(t, "runner", p.Name)
	}

	dir := filepath.Join(t.TempDir(), "carol")
	assert.Equal(t, Person{Name: "carol", Source: "folder name"}, whoSubmitted(ctx, dir))
	assert.Equal(t, "unknown", labOf(ctx, t.TempDir()).Commit)
}
