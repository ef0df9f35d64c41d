package kubernetes

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/runtime/serializer"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	kustomizetypes "sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/yaml"
)

// The kustomizations under test, one per deployment variant.
var variants = []string{"base", "relay-through"}

// strictDecoder decodes YAML or JSON into the Kubernetes API's Go types of
// the kinds the manifests use, failing on unknown fields, duplicate fields
// and values of the wrong type, as the API server's strict field
// validation does.
func strictDecoder(t *testing.T) runtime.Decoder {
	t.Helper()
	s := runtime.NewScheme()
	for _, add := range []func(*runtime.Scheme) error{corev1.AddToScheme, appsv1.AddToScheme, policyv1.AddToScheme} {
		require.NoError(t, add(s))
	}
	return serializer.NewCodecFactory(s, serializer.EnableStrict).UniversalDeserializer()
}

// bundle is one variant's objects, decoded.
type bundle struct {
	dir          string
	kustomize    kustomizetypes.Kustomization
	objects      []runtime.Object
	configMaps   map[string]*corev1.ConfigMap
	services     []*corev1.Service
	budgets      []*policyv1.PodDisruptionBudget
	deployment   *appsv1.Deployment
	statefulSet  *appsv1.StatefulSet
	documentsRaw int
}

// loadBundle reads a kustomization and every object of the files it lists.
func loadBundle(t *testing.T, dir string) *bundle {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, "kustomization.yaml"))
	require.NoError(t, err)
	b := &bundle{dir: dir, configMaps: map[string]*corev1.ConfigMap{}}
	require.NoError(t, yaml.UnmarshalStrict(raw, &b.kustomize), "%s/kustomization.yaml", dir)
	dec := strictDecoder(t)
	for _, res := range b.kustomize.Resources {
		docs, err := splitDocuments(filepath.Join(dir, res))
		require.NoError(t, err)
		for i, doc := range docs {
			obj, _, err := dec.Decode(doc, nil, nil)
			require.NoError(t, err, "%s/%s document %d", dir, res, i+1)
			b.add(t, obj)
		}
	}
	return b
}

func (b *bundle) add(t *testing.T, obj runtime.Object) {
	t.Helper()
	b.objects = append(b.objects, obj)
	b.documentsRaw++
	switch o := obj.(type) {
	case *corev1.ConfigMap:
		b.configMaps[o.Name] = o
	case *corev1.Service:
		b.services = append(b.services, o)
	case *policyv1.PodDisruptionBudget:
		b.budgets = append(b.budgets, o)
	case *appsv1.Deployment:
		require.Nil(t, b.deployment, "one workload per variant")
		b.deployment = o
	case *appsv1.StatefulSet:
		require.Nil(t, b.statefulSet, "one workload per variant")
		b.statefulSet = o
	case *corev1.Namespace:
	default:
		t.Fatalf("%s: unexpected kind %T", b.dir, obj)
	}
}

// pod returns the workload's pod template and selector.
func (b *bundle) pod(t *testing.T) (*corev1.PodTemplateSpec, map[string]string) {
	t.Helper()
	switch {
	case b.deployment != nil:
		return &b.deployment.Spec.Template, b.deployment.Spec.Selector.MatchLabels
	case b.statefulSet != nil:
		return &b.statefulSet.Spec.Template, b.statefulSet.Spec.Selector.MatchLabels
	}
	t.Fatalf("%s: no Deployment or StatefulSet", b.dir)
	return nil, nil
}

// splitDocuments reads a multi-document YAML file, skipping empty
// documents (a file that starts with a comment and ---).
func splitDocuments(path string) ([][]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs [][]byte
	for {
		doc, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		if len(bytes.TrimSpace(stripComments(doc))) > 0 {
			docs = append(docs, doc)
		}
	}
}

func stripComments(doc []byte) []byte {
	var out []byte
	for _, line := range bytes.Split(doc, []byte("\n")) {
		if t := bytes.TrimSpace(line); len(t) > 0 && t[0] != '#' {
			out = append(out, line...)
			out = append(out, '\n')
		}
	}
	return out
}
