// A local stand-in for the collector's internal statusutil module, whose
// source the module proxy used by this project refuses to serve. See
// ../README.md for why it exists and how to drop it.
module go.opentelemetry.io/collector/internal/statusutil

go 1.26.0

require (
	github.com/stretchr/testify v1.12.1
	google.golang.org/genproto/googleapis/rpc v0.0.0-20260803160001-6ac0973c030d
	google.golang.org/grpc v1.84.0
	google.golang.org/protobuf v1.36.12
)

require (
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.47.0 // indirect
)
