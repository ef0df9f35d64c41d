package translator

import "github.com/sentryprofile/otelcol-sentryprofile/translator/sentryresource"

// Resource is who sent an envelope (translator/sentryresource), under the
// name the receiver's signal code still uses.
type Resource = sentryresource.Resource
