package pangolin

import (
	"context"

	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

// The writer's steps that every write path shares (apply.go, access.go): each sends one
// request, counts it (pic_pangolin_writes_total), and keeps what Pangolin answered in
// the mirror. Errors are Pangolin's, for the caller to sort (failed, lost, fail).

// updateResource sends u for e's resource, keeps the answer in e with its effective
// sso (keepSSO), and puts e in the mirror under niceID. On an error e is as it was.
func (s *Sink) updateResource(ctx context.Context, niceID string, e *entry, u pangolinapi.ResourceUpdate) error {
	updated, err := s.api.UpdateResource(ctx, e.res.ResourceID, u)
	countWrite(pangolinapi.OpUpdateResource, err)
	if err != nil {
		return err
	}
	e.res = keepSSO(updated, e.res, u.SSO)
	s.put(niceID, e)
	return nil
}

// deleteResource deletes a resource, and its targets with it.
func (s *Sink) deleteResource(ctx context.Context, resourceID int) error {
	err := s.api.DeleteResource(ctx, resourceID)
	countWrite(pangolinapi.OpDeleteResource, err)
	return err
}

// keepSSO is the resource an update answered, with its effective SSO setting: the one
// the answer carries (Pangolin 1.22 and later), else the one sent, else the one before
// the update, which an update that does not send sso cannot change.
func keepSSO(updated, before pangolinapi.Resource, sent *bool) pangolinapi.Resource {
	switch {
	case updated.SSOReported:
	case sent != nil:
		updated.SSO, updated.SSOReported = *sent, true
	default:
		updated.SSO, updated.SSOReported = before.SSO, before.SSOReported
	}
	return updated
}
