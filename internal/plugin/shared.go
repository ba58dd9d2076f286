package plugin

import (
	"fmt"

	"sigs.k8s.io/controller-runtime/pkg/manager"
)

// Shared holds the parts several sources share (the AccessPolicies that protect
// objects of every kind), each built once per start: the first source that asks for a
// part builds it, and the others are handed the same. What a part declares is wired by
// the core once (Declarations), where each source wires only its own (Source.Declare).
// The core builds sources one at a time: Shared is not for concurrent use.
type Shared struct {
	parts map[string]SharedPart
	// order is the parts' names in the order they were built, for the core to wire
	// them in a stable order.
	order []string
}

// SharedPart is a part several sources share.
type SharedPart interface {
	Declare() SharedDeclaration
}

// SharedDeclaration is what a shared part asks of the core, as data, once for every
// source that uses it.
type SharedDeclaration struct {
	// Controllers are the part's reconcilers (the status of AccessPolicies), which
	// `render` runs after the sources' own.
	Controllers []Controller
	// Runnables run with the manager, in a cluster only (not in `render`).
	Runnables []manager.Runnable
}

// NewShared returns the parts of one start, none built yet.
func NewShared() *Shared { return &Shared{parts: map[string]SharedPart{}} }

// Share returns the part of s named name, which build builds the first time a source
// asks for it. A part whose build fails is not kept: the error stops the start.
func Share[T SharedPart](s *Shared, name string, build func() (T, error)) (T, error) {
	var zero T
	if s == nil {
		return zero, fmt.Errorf("build the %s shared by sources: SourceDeps.Shared is not set", name)
	}
	if part, built := s.parts[name]; built {
		p, ok := part.(T)
		if !ok {
			return zero, fmt.Errorf("the %s shared by sources is a %T, not a %T", name, part, zero)
		}
		return p, nil
	}
	p, err := build()
	if err != nil {
		return zero, err
	}
	s.parts[name] = p
	s.order = append(s.order, name)
	return p, nil
}

// Declarations are what the parts built so far ask of the core, in the order they
// were built.
func (s *Shared) Declarations() []SharedDeclaration {
	if s == nil {
		return nil
	}
	out := make([]SharedDeclaration, len(s.order))
	for i, name := range s.order {
		out[i] = s.parts[name].Declare()
	}
	return out
}
