// Package kubernetes holds the distribution's Kubernetes manifests and
// their tests; it has no code outside them.
//
//   - base/: a Deployment of receivers behind a Service (Sentry SDKs → an
//     OTLP profiles backend).
//   - relay-through/: a StatefulSet forwarding every request to Sentry, with
//     a PersistentVolume per replica for the spool (forward::storage).
//
// Each directory is a kustomization of plain manifests. The tests decode
// every object with the Kubernetes API's own Go types in strict mode
// (unknown or duplicate fields fail), build each kustomization with
// kustomize's library, check what the manifests promise each other and the
// collector (ports, probes, labels, volumes, grace period against the
// configuration's timeouts, the image's user), and, given a built collector
// (OTELCOL_BIN), run its `validate` on every configuration they carry. The
// Helm values in ../helm are checked against the same manifests. Nothing is
// downloaded at test time.
package kubernetes
