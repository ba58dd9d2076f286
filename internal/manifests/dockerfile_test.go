package manifests

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
)

// instruction is one Dockerfile instruction, continuation lines joined.
type instruction struct {
	cmd  string // upper case: FROM, RUN, USER, ...
	args string
}

// parseDockerfile splits a Dockerfile into instructions, skipping comments and joining
// lines ending with a backslash.
func parseDockerfile(text string) []instruction {
	var out []instruction
	var current strings.Builder
	for line := range strings.SplitSeq(text, "\n") {
		trimmed := strings.TrimSpace(line)
		if current.Len() == 0 && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		if rest, ok := strings.CutSuffix(trimmed, `\`); ok {
			current.WriteString(rest + " ")
			continue
		}
		current.WriteString(trimmed)
		cmd, args, _ := strings.Cut(current.String(), " ")
		out = append(out, instruction{strings.ToUpper(cmd), strings.TrimSpace(args)})
		current.Reset()
	}
	return out
}

// finalStage is the instructions from the last FROM on: what the image is.
func finalStage(instructions []instruction) []instruction {
	last := -1
	for i, in := range instructions {
		if in.cmd == "FROM" {
			last = i
		}
	}
	if last < 0 {
		return nil
	}
	return instructions[last:]
}

var numericUser = regexp.MustCompile(`^([0-9]+)(?::([0-9]+))?$`)

// checkDockerfile returns what is wrong with the image a Dockerfile builds, and the
// user and group it runs as.
func checkDockerfile(text string) (problems []string, uid, gid int64) {
	all := parseDockerfile(text)
	final := finalStage(all)
	if len(final) == 0 {
		return []string{"no FROM"}, 0, 0
	}
	base := strings.Fields(final[0].args)[0]
	repo, tag, _ := strings.Cut(base, ":")
	if !strings.HasPrefix(repo, "gcr.io/distroless/") {
		problems = append(problems, fmt.Sprintf("the image is based on %s, not a distroless image (no shell, no package manager)", base))
	} else if repo != "gcr.io/distroless/static" {
		problems = append(problems, fmt.Sprintf("the image is based on %s, not gcr.io/distroless/static: the static binary needs no libc, and static carries the CA certificates for HTTPS", base))
	}
	if !strings.Contains(tag, "nonroot") {
		problems = append(problems, fmt.Sprintf("the base image %s is not a nonroot variant", base))
	}
	var user string
	for _, in := range final[1:] {
		switch in.cmd {
		case "USER":
			user = in.args // the last one counts
		case "COPY":
			if !strings.HasPrefix(in.args, "--from=") {
				problems = append(problems, fmt.Sprintf("COPY %s puts build-context files into the image; only the binary belongs there", in.args))
			}
		case "ENTRYPOINT":
			if !strings.HasPrefix(in.args, "[") {
				problems = append(problems, fmt.Sprintf("ENTRYPOINT %s is in shell form: the manager must be PID 1 to receive SIGTERM and release its Lease (and distroless has no shell)", in.args))
			}
		case "ADD", "RUN":
			problems = append(problems, fmt.Sprintf("%s %s in the final stage", in.cmd, in.args))
		case "LABEL", "EXPOSE", "WORKDIR":
		default:
			problems = append(problems, fmt.Sprintf("unexpected %s in the final stage", in.cmd))
		}
	}
	m := numericUser.FindStringSubmatch(user)
	switch {
	case user == "":
		problems = append(problems, "the final stage sets no USER")
	case m == nil:
		problems = append(problems, fmt.Sprintf("USER %s is not numeric: the kubelet cannot verify runAsNonRoot for a user name", user))
	default:
		uid, _ = strconv.ParseInt(m[1], 10, 64)
		gid = uid
		if m[2] != "" {
			gid, _ = strconv.ParseInt(m[2], 10, 64)
		}
		if uid == 0 || gid == 0 {
			problems = append(problems, fmt.Sprintf("USER %s is root", user))
		}
	}
	static := slices.ContainsFunc(all, func(in instruction) bool {
		return in.cmd == "RUN" && strings.Contains(in.args, "go build") && strings.Contains(in.args, "CGO_ENABLED=0")
	})
	if !static {
		problems = append(problems, "no RUN builds the binary with CGO_ENABLED=0: distroless/static has no libc")
	}
	// Multi-arch (the release builds linux/amd64 and linux/arm64): the Go stage runs on
	// the builder's platform and cross-compiles, instead of running the whole build
	// under emulation.
	for _, in := range all[:len(all)-len(final)] {
		if in.cmd == "FROM" && !strings.HasPrefix(in.args, "--platform=$BUILDPLATFORM ") {
			problems = append(problems, fmt.Sprintf("FROM %s: a build stage runs on --platform=$BUILDPLATFORM and cross-compiles", in.args))
		}
	}
	crossBuild := slices.ContainsFunc(all, func(in instruction) bool {
		return in.cmd == "RUN" && strings.Contains(in.args, "go build") &&
			strings.Contains(in.args, "GOOS=$TARGETOS") && strings.Contains(in.args, "GOARCH=$TARGETARCH")
	})
	if !crossBuild {
		problems = append(problems, "no RUN builds with GOOS=$TARGETOS GOARCH=$TARGETARCH: every platform would get the builder's binary")
	}
	for _, in := range all {
		if in.cmd == "ARG" || in.cmd == "ENV" {
			if name := strings.ToUpper(in.args); strings.Contains(name, "TOKEN") || strings.Contains(name, "PASSWORD") || strings.Contains(name, "SECRET") {
				problems = append(problems, fmt.Sprintf("%s %s: a credential baked into the image", in.cmd, in.args))
			}
		}
	}
	return problems, uid, gid
}

// TestDockerfile checks the image the repository's Dockerfile builds (docker build is
// not run here): a static binary on a distroless nonroot base, run as a numeric non-root
// user, the same user every rendering's pod asks for (runAsUser and runAsGroup), exec
// form so that the manager is PID 1, nothing else copied in.
func TestDockerfile(t *testing.T) {
	data, err := os.ReadFile(repoPath("Dockerfile"))
	require.NoError(t, err)
	problems, uid, gid := checkDockerfile(string(data))
	require.Empty(t, problems)
	assert.Equal(t, int64(65532), uid, "distroless's nonroot user")
	for _, r := range renderings {
		t.Run(r.name, func(t *testing.T) {
			d := only[appsv1.Deployment](t, r.render(t), "Deployment")
			pod := d.Spec.Template.Spec
			require.NotNil(t, pod.SecurityContext)
			assert.Equal(t, &uid, pod.SecurityContext.RunAsUser, "pod runAsUser is the image's USER")
			assert.Equal(t, &gid, pod.SecurityContext.RunAsGroup, "pod runAsGroup is the image's USER group")
			for _, c := range pod.Containers {
				if c.SecurityContext != nil && c.SecurityContext.RunAsUser != nil {
					assert.Equal(t, uid, *c.SecurityContext.RunAsUser, "container %s runAsUser", c.Name)
				}
				if c.SecurityContext != nil && c.SecurityContext.RunAsGroup != nil {
					assert.Equal(t, gid, *c.SecurityContext.RunAsGroup, "container %s runAsGroup", c.Name)
				}
			}
		})
	}
}

// TestDockerfileCheckCatchesProblems makes sure checkDockerfile would fail on the
// mistakes it is there for.
func TestDockerfileCheckCatchesProblems(t *testing.T) {
	data, err := os.ReadFile(repoPath("Dockerfile"))
	require.NoError(t, err)
	good := string(data)
	cases := map[string]func(string) string{
		"a full base image": func(s string) string {
			return strings.Replace(s, "FROM gcr.io/distroless/static:nonroot", "FROM debian:bookworm", 1)
		},
		"the root distroless variant": func(s string) string {
			return strings.Replace(s, "gcr.io/distroless/static:nonroot", "gcr.io/distroless/static:latest", 1)
		},
		"USER root":           func(s string) string { return strings.Replace(s, "USER 65532:65532", "USER 0:0", 1) },
		"USER by name":        func(s string) string { return strings.Replace(s, "USER 65532:65532", "USER nonroot", 1) },
		"no USER":             func(s string) string { return strings.Replace(s, "USER 65532:65532\n", "", 1) },
		"USER root after all": func(s string) string { return s + "USER root\n" },
		"shell-form ENTRYPOINT": func(s string) string {
			return strings.Replace(s, `ENTRYPOINT ["/manager"]`, "ENTRYPOINT /manager", 1)
		},
		"the build context copied in": func(s string) string { return s + "COPY . /src\n" },
		"cgo enabled":                 func(s string) string { return strings.ReplaceAll(s, "CGO_ENABLED=0 ", "") },
		"a token argument":            func(s string) string { return "ARG GITHUB_TOKEN\n" + s },
		"another distroless base, without CA certificates": func(s string) string {
			return strings.Replace(s, "gcr.io/distroless/static:nonroot", "gcr.io/distroless/base-nossl:nonroot", 1)
		},
		"a build stage under emulation": func(s string) string {
			return strings.Replace(s, "FROM --platform=$BUILDPLATFORM golang", "FROM golang", 1)
		},
		"the builder's architecture for every platform": func(s string) string {
			return strings.Replace(s, "GOARCH=$TARGETARCH ", "", 1)
		},
	}
	require.Contains(t, good, "USER 65532:65532\n")
	require.Contains(t, good, `ENTRYPOINT ["/manager"]`)
	for name, mutate := range cases {
		t.Run(name, func(t *testing.T) {
			bad := mutate(good)
			require.NotEqual(t, good, bad, "the mutation applies to the Dockerfile")
			problems, _, _ := checkDockerfile(bad)
			assert.NotEmpty(t, problems)
		})
	}
}
