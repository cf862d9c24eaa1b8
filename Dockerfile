# The cairn image: one static binary on an empty base, running as a non-root user.
# Build with `make docker-build IMG=cairn:dev`.
FROM golang:1.26 AS build
WORKDIR /src
COPY go.mod go.sum ./
RUN go mod download
COPY . .
ARG VERSION=dev
RUN CGO_ENABLED=0 go build -trimpath \
      -ldflags "-s -w -X github.com/cairn-dev/cairn/internal/version.Version=${VERSION}" \
      -o /out/cairn ./cmd/cairn

FROM scratch
COPY --from=build /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/
COPY --from=build /out/cairn /cairn
USER 65532:65532
ENTRYPOINT ["/cairn"]
