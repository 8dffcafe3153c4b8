package helpers

// Key is a helper in the wrong package.
func Key(shelf string) string { return "shelf:" + shelf }
