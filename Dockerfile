# Static binary, distroless, non-root. The build command is the Makefile's `make build`.
# Multi-arch without emulation: the build stage runs on the builder's platform and
# cross-compiles for the target one (docker buildx sets BUILDPLATFORM, TARGETOS and
# TARGETARCH); the final stage only copies. The release builds linux/amd64 and
# linux/arm64 (.github/workflows/release.yaml). distroless/static carries, by its
# documentation, the CA certificates an HTTPS client needs, the nonroot user and tzdata.
FROM --platform=$BUILDPLATFORM golang:1.26 AS build
ARG TARGETOS=linux
ARG TARGETARCH
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
RUN CGO_ENABLED=0 GOOS=$TARGETOS GOARCH=$TARGETARCH go build -trimpath -ldflags='-s -w' -o /out/manager ./cmd/manager

FROM gcr.io/distroless/static:nonroot
COPY --from=build /out/manager /manager
USER 65532:65532
ENTRYPOINT ["/manager"]
