package pangolin

import (
	"context"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// orgTTL is how long a list of the org's roles or users answers for a name it lacks: a
// name missing from an older list is asked again, once.
const orgTTL = 30 * time.Second

// orgList is one of the org's lists (its roles, its users), read when a policy first
// needs it or at a full refresh when a resource is governed, and kept: the workers that
// need it at once share one read, and a list older than orgTTL is read again when asked
// to refresh. It has its own lock: reading it waits for no one's write to Pangolin.
type orgList[T any] struct {
	// read lists the org's items; a list read and empty is not nil ("never read").
	read func(ctx context.Context) ([]T, error)

	mu    sync.Mutex
	items []T // nil: not read
	at    time.Time
	reads singleflight.Group
}

// get returns the list; refresh reads it again when it is older than orgTTL. now is the
// sink's clock.
func (l *orgList[T]) get(ctx context.Context, refresh bool, now func() time.Time) ([]T, error) {
	have, at := l.held()
	if have != nil && !(refresh && now().Sub(at) >= orgTTL) {
		return have, nil
	}
	items, err := l.fetch(ctx)
	if err != nil {
		return nil, err
	}
	l.set(items, now())
	return items, nil
}

// readSince is the list as it is since since: the one held when it was read then or
// later, else one read now, not kept (a refresh keeps it with set once it succeeds).
func (l *orgList[T]) readSince(ctx context.Context, since time.Time, now func() time.Time) ([]T, time.Time, error) {
	have, at := l.held()
	if have != nil && !at.Before(since) {
		return have, at, nil
	}
	items, err := l.fetch(ctx)
	if err != nil {
		return nil, time.Time{}, err
	}
	return items, now(), nil
}

// fetch reads the list, shared with any read of it in flight.
func (l *orgList[T]) fetch(ctx context.Context) ([]T, error) {
	got, err, _ := l.reads.Do("list", func() (any, error) { return l.read(ctx) })
	if err != nil {
		return nil, err
	}
	return got.([]T), nil
}

func (l *orgList[T]) held() ([]T, time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.items, l.at
}

// set keeps items, read at at.
func (l *orgList[T]) set(items []T, at time.Time) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.items, l.at = items, at
}

// forget drops the list: the next need reads it again.
func (l *orgList[T]) forget() { l.set(nil, time.Time{}) }

// orgLists are the org's roles and users.
type orgLists struct {
	roles orgList[pangolinapi.Role]
	users orgList[pangolinapi.User]
}

func newOrgLists(api *pangolinapi.Client) *orgLists {
	return &orgLists{
		roles: orgList[pangolinapi.Role]{read: api.ListRoles},
		users: orgList[pangolinapi.User]{read: func(ctx context.Context) ([]pangolinapi.User, error) {
			users, err := api.ListUsers(ctx)
			if err == nil && users == nil {
				users = []pangolinapi.User{}
			}
			return users, err
		}},
	}
}

// orgRead is what a full refresh read of the org's lists, kept once it succeeds.
type orgRead struct {
	roles   []pangolinapi.Role
	rolesAt time.Time
	users   []pangolinapi.User
	usersAt time.Time
}

// keep holds what a refresh read.
func (o *orgLists) keep(r orgRead) {
	o.roles.set(r.roles, r.rolesAt)
	o.users.set(r.users, r.usersAt)
}

// forget drops both lists: the next need reads them again.
func (o *orgLists) forget() {
	o.roles.forget()
	o.users.forget()
}
