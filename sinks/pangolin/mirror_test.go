package pangolin

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/stefb69/pangolin-ingress-controller/internal/route"
	"github.com/stefb69/pangolin-ingress-controller/sinks/pangolin/pangolinapi"
)

func TestFoldKeyIsEqualFold(t *testing.T) {
	cases := []struct {
		name string
		a, b string
	}{
		{"the same host is the same key", "app.example.com", "app.example.com"},
		{"ASCII in another case is the same key", "App.Example.COM", "app.example.com"},
		{"the Kelvin sign folds to k", "\u212a.example.com", "k.example.com"},
		{"the long s folds to s, which lower-casing alone misses", "\u017fhop.example.com", "shop.example.com"},
		{"a longer host is another key", "app.example.com", "app.example.com."},
		{"another letter is another key", "app.example.com", "apq.example.com"},
		{"two invalid bytes decode alike", "a\xffb", "a\xfeb"},
		{"the empty host is its own key", "", ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			assert.Equal(t, strings.EqualFold(c.a, c.b), foldKey(c.a) == foldKey(c.b))
		})
	}
	t.Run("random strings of letters that fold agree with EqualFold", func(t *testing.T) {
		alphabet := []rune("kKsS\u212a\u017f\u00df\u1e9eaA.")
		rng := rand.New(rand.NewPCG(1, 2))
		word := func() string {
			r := make([]rune, rng.IntN(4))
			for i := range r {
				r[i] = alphabet[rng.IntN(len(alphabet))]
			}
			return string(r)
		}
		for range 5000 {
			a, b := word(), word()
			require.Equal(t, strings.EqualFold(a, b), foldKey(a) == foldKey(b), "%q and %q", a, b)
		}
	})
}

// TestIndexesFindWhatAScanFinds: whatever the writes and refreshes did to the entries,
// the mirror's indexes find, for any host, every entry a scan of all entries with
// Holders' filter finds, and for any object, those whose mark names it.
func TestIndexesFindWhatAScanFinds(t *testing.T) {
	hosts := []string{"app.example.com", "APP.example.com", "shop.example.com", "tcp:5432", "\u017fhop.example.com"}
	owners := []route.Origin{
		{Kind: "Ingress", Namespace: "shop", Name: "web"},
		{Kind: "Ingress", Namespace: "shop", Name: "api"},
		{Kind: "HTTPRoute", Namespace: "shop", Name: "web"},
	}
	rng := rand.New(rand.NewPCG(3, 4))
	randomEntry := func() *entry {
		o := owners[rng.IntN(len(owners))]
		return &entry{
			mark: mark{Kind: o.Kind, Namespace: o.Namespace, Name: o.Name, Host: hosts[rng.IntN(len(hosts))]},
			res:  pangolinapi.Resource{FullDomain: hosts[rng.IntN(len(hosts))]},
		}
	}
	m := newMirror(Options{MaxConcurrentReads: 1})
	for step := range 2000 {
		id := fmt.Sprintf("pic-default-%d", rng.IntN(8))
		switch rng.IntN(10) {
		case 0:
			m.forget(id)
		case 1:
			all := map[string]*entry{}
			for i := range rng.IntN(6) {
				all[fmt.Sprintf("pic-default-%d", i)] = randomEntry()
			}
			m.mu.Lock()
			m.setEntries(all)
			m.mu.Unlock()
		default:
			m.put(id, randomEntry())
		}
		m.mu.Lock()
		for _, host := range hosts {
			var scanned, found []*entry
			for _, e := range m.entries {
				if e.mark.Host == host || strings.EqualFold(e.res.FullDomain, host) {
					scanned = append(scanned, e)
				}
			}
			for _, e := range m.claimants(host) {
				if e.mark.Host == host || strings.EqualFold(e.res.FullDomain, host) {
					found = append(found, e)
				}
			}
			require.ElementsMatch(t, scanned, found, "step %d, host %s", step, host)
			require.False(t, slices.Contains(m.claimants(host), nil), "step %d: an index entry outlived its entry", step)
		}
		for _, o := range owners {
			var scanned []string
			for id, e := range m.entries {
				if e.mark.sameObject(o) {
					scanned = append(scanned, id)
				}
			}
			// The origin Current is asked for carries a UID and a creation time the marks
			// do not hold.
			asked := o
			asked.UID, asked.Created = "3f0c", time.Unix(1700000000, 0)
			require.ElementsMatch(t, scanned, m.owned(asked), "step %d, owner %s", step, o.Key())
		}
		m.mu.Unlock()
	}
}
