package pangolin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/pangolinsim"
	"github.com/stefb69/pangolin-ingress-controller/internal/pic"
	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

func TestFindUser(t *testing.T) {
	alice := pangolinapi.User{UserID: "alice", Email: "alice@corp.example", Username: "alice"}
	internal := pangolinapi.User{UserID: "dave", Email: "dave@corp.example", Username: "dave@corp.example"}
	lookalike := pangolinapi.User{UserID: "mallory", Email: "mallory@evil.example", Username: "alice@corp.example"}
	carol1 := pangolinapi.User{UserID: "carol1", Email: "carol@corp.example", Username: "carol"}
	carol2 := pangolinapi.User{UserID: "carol2", Email: "carol@other.example", Username: "carol"}
	twin := pangolinapi.User{UserID: "alice-twin", Email: "Alice@Corp.Example", Username: "alice-2"}
	upper := pangolinapi.User{UserID: "bob", Email: "bob@corp.example", Username: "Bob"}

	cases := []struct {
		name  string
		users []pangolinapi.User
		ref   string
		want  userMatch
		user  string // the user id found
	}{
		{"an email matches the account with that email", []pangolinapi.User{alice, carol1}, "alice@corp.example", userFound, "alice"},
		{"an email matches in any case", []pangolinapi.User{alice}, "ALICE@corp.EXAMPLE", userFound, "alice"},
		{"a username matches the account with that username", []pangolinapi.User{alice, carol1}, "alice", userFound, "alice"},
		{"a username matches exactly, not in another case", []pangolinapi.User{upper}, "bob", userMissing, ""},
		{"a username does not match an email's local part", []pangolinapi.User{internal}, "dave", userMissing, ""},
		{"an account whose username is its own email is found by it", []pangolinapi.User{internal}, "dave@corp.example", userFound, "dave"},
		{"an email that is only another account's username is refused, not granted", []pangolinapi.User{lookalike}, "alice@corp.example", userLookalike, ""},
		{"an email that is another account's username is refused even when its owner joined", []pangolinapi.User{alice, lookalike}, "alice@corp.example", userLookalike, ""},
		{"a lookalike username in another case is refused too", []pangolinapi.User{alice, {UserID: "m", Email: "m@evil.example", Username: "ALICE@corp.example"}}, "alice@corp.example", userLookalike, ""},
		{"a username two accounts have is ambiguous", []pangolinapi.User{carol1, carol2}, "carol", userAmbiguous, ""},
		{"an email two accounts have is ambiguous", []pangolinapi.User{alice, twin}, "alice@corp.example", userAmbiguous, ""},
		{"an unknown email is missing", []pangolinapi.User{alice}, "mallory@corp.example", userMissing, ""},
		{"no account is missing", nil, "alice", userMissing, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			u, got := findUser(tc.users, tc.ref)
			assert.Equal(t, tc.want, got)
			assert.Equal(t, tc.user, u.UserID)
		})
	}
}

// TestUserLookalikeIsNeverGranted: before Alice joins, an account whose username is
// "alice@corp.example" exists. A policy naming alice@corp.example is refused and grants
// nothing: not on a new host, not on a published one, and not once Alice joined.
func TestUserLookalikeIsNeverGranted(t *testing.T) {
	shop := ingress("shop", "web")
	const host = "app.example.com"
	mallory := pangolinsim.User{ID: "mallory00000001", Email: "mallory@evil.example", Username: "alice@corp.example", Type: "oidc", IdpID: 1, IdpName: "corp"}
	beforeAlice := func(o *pangolinsim.Options) {
		accessOrg(o)
		o.Users = append(o.Users[:1:1], o.Users[2:]...) // without Alice
		o.Users = append(o.Users, mallory)
	}
	forAlice := route.AccessPolicy{Users: []string{"alice@corp.example"}}
	refused := func(t *testing.T, o outcome) {
		t.Helper()
		require.NoError(t, o.err)
		require.Equal(t, []string{pic.ReasonAccessPolicyNotApplied}, reasons(o.rejections))
		assert.Contains(t, o.rejections[0].Message, `user "alice@corp.example"`, "the refusal names the entry")
		assert.Contains(t, o.rejections[0].Message, "username")
	}

	t.Run("a new host is not published", func(t *testing.T) {
		w := newWorld(t, beforeAlice)
		w.fault(nil)
		refused(t, w.reconcile(shop, protected(web(shop, host, 8080), true, forAlice)))
		assert.Empty(t, w.fake.Resources())
		assert.Empty(t, w.writesLogged())
	})

	t.Run("a published host keeps its access, and the lookalike is not granted", func(t *testing.T) {
		w := newWorld(t, beforeAlice)
		w.converge(shop, protected(web(shop, host, 8080), true, route.AccessPolicy{Roles: []string{"k8s-devs"}}))
		refused(t, w.reconcile(shop, protected(web(shop, host, 8080), true, forAlice)))
		p := w.policyOn(host)
		assert.Empty(t, p.UserIDs)
		assert.Equal(t, []int{3}, p.RoleIDs, "the access Pangolin held stays")
	})

	t.Run("once Alice joins, the entry stays refused while the lookalike exists", func(t *testing.T) {
		w := newWorld(t, beforeAlice)
		w.fake.SeedUser(pangolinsim.User{ID: "alice0000000001", Email: "alice@corp.example", Username: "alice", Type: "oidc", IdpID: 1, IdpName: "corp"})
		w.sink.forgetOrg()
		w.fault(nil)
		refused(t, w.reconcile(shop, protected(web(shop, host, 8080), true, forAlice)))
		assert.Empty(t, w.fake.Resources())
	})

	t.Run("Alice is granted once the lookalike is gone", func(t *testing.T) {
		w := newWorld(t, accessOrg)
		w.converge(shop, protected(web(shop, host, 8080), true, forAlice))
		assert.Equal(t, []string{"alice0000000001"}, w.policyOn(host).UserIDs)
	})
}
