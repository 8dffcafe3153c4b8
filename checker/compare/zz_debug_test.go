package compare

import (
	"context"
	"os"
	"testing"
)

func TestDebugPlay(t *testing.T) {
	var rs []Result
	for _, row := range Reference() {
		res, err := Play(context.Background(), Default(), row, Options{})
		if err != nil {
			t.Fatal(err)
		}
		rs = append(rs, res)
		t.Log(res.Technique, res.Elapsed)
	}
	Render(os.Stdout, Default(), Reference(), rs)
}
