package newt

import (
	"fmt"
	"io"
)

// Credentials are what the agent presents to Pangolin. Printing them shows the id only.
type Credentials struct {
	ID     string
	Secret string
}

// String hides the secret.
func (c Credentials) String() string { return "newt.Credentials{ID: " + c.ID + ", Secret: [redacted]}" }

// Format makes every fmt verb, %#v included, print String.
func (c Credentials) Format(f fmt.State, _ rune) { _, _ = io.WriteString(f, c.String()) }
