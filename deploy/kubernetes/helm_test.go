package kubernetes

import (
	"encoding/json"
	"os"
	"path"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/yaml"

	"github.com/sentryprofile/otelcol-sentryprofile/deploy/image"
)

// chartValues are the OpenTelemetry Collector chart's values that
// deploy/helm sets, with the Kubernetes API's types where the chart
// copies a value into the pod spec as it is: strict decoding then catches
// a misspelled field there as the API server would.
type chartValues struct {
	Mode         string `json:"mode"`
	ReplicaCount int32  `json:"replicaCount"`
	Image        struct {
		Repository string `json:"repository"`
		Tag        string `json:"tag"`
	} `json:"image"`
	Command struct {
		Name      string   `json:"name"`
		ExtraArgs []string `json:"extraArgs"`
	} `json:"command"`
	AlternateConfig               map[string]any              `json:"alternateConfig"`
	ExtraEnvs                     []corev1.EnvVar             `json:"extraEnvs"`
	Ports                         map[string]chartPort        `json:"ports"`
	Resources                     corev1.ResourceRequirements `json:"resources"`
	UseGOMEMLIMIT                 bool                        `json:"useGOMEMLIMIT"`
	ReadinessProbe                corev1.Probe                `json:"readinessProbe"`
	LivenessProbe                 corev1.Probe                `json:"livenessProbe"`
	LifecycleHooks                corev1.Lifecycle            `json:"lifecycleHooks"`
	TerminationGracePeriodSeconds int64                       `json:"terminationGracePeriodSeconds"`
	PodSecurityContext            corev1.PodSecurityContext   `json:"podSecurityContext"`
	SecurityContext               corev1.SecurityContext      `json:"securityContext"`
	Statefulset                   *struct {
		PodManagementPolicy  appsv1.PodManagementPolicyType `json:"podManagementPolicy"`
		VolumeClaimTemplates []corev1.PersistentVolumeClaim `json:"volumeClaimTemplates"`
	} `json:"statefulset"`
	ExtraVolumeMounts []corev1.VolumeMount `json:"extraVolumeMounts"`
}

type chartPort struct {
	Enabled       bool            `json:"enabled"`
	ContainerPort int32           `json:"containerPort"`
	ServicePort   int32           `json:"servicePort"`
	Protocol      corev1.Protocol `json:"protocol"`
}

// TestHelmValues checks that each values file runs the collector as the
// manifests of its variant do.
func TestHelmValues(t *testing.T) {
	cases := []struct{ values, variant, mode string }{
		{"../helm/values.yaml", "base", "deployment"},
		{"../helm/values-relay-through.yaml", "relay-through", "statefulset"},
	}
	for _, tc := range cases {
		t.Run(tc.variant, func(t *testing.T) {
			raw, err := os.ReadFile(tc.values)
			require.NoError(t, err)
			var v chartValues
			require.NoError(t, yaml.UnmarshalStrict(raw, &v), tc.values)
			b := loadBundle(t, tc.variant)
			tmpl, _ := b.pod(t)
			c := &tmpl.Spec.Containers[0]

			assert.Equal(t, tc.mode, v.Mode)
			assert.Equal(t, distVersion(t), v.Image.Tag, "the tag make image gives")
			assert.Equal(t, path.Base(image.BinaryPath), v.Command.Name, "the chart runs /<command.name>")
			assert.Equal(t, []string{image.FeatureGates}, v.Command.ExtraArgs)
			assert.JSONEq(t, configJSON(t, configText(t, b, tmpl, c)), toJSON(t, v.AlternateConfig), "alternateConfig is the variant's configuration")
			checkChartEnv(t, b, c, v.ExtraEnvs)
			checkChartPorts(t, c, v.Ports)
			assert.Equal(t, c.Resources, v.Resources)
			assert.True(t, v.UseGOMEMLIMIT, "the chart sets GOMEMLIMIT to 80% of limits.memory")
			checkChartProbe(t, c.ReadinessProbe, &v.ReadinessProbe)
			checkChartProbe(t, c.LivenessProbe, &v.LivenessProbe)
			assert.Equal(t, c.Lifecycle, &v.LifecycleHooks)
			assert.Equal(t, tmpl.Spec.TerminationGracePeriodSeconds, &v.TerminationGracePeriodSeconds)
			assert.Equal(t, tmpl.Spec.SecurityContext, &v.PodSecurityContext)
			assert.Equal(t, c.SecurityContext, &v.SecurityContext)
			if b.statefulSet != nil {
				require.NotNil(t, v.Statefulset)
				assert.Equal(t, b.statefulSet.Spec.PodManagementPolicy, v.Statefulset.PodManagementPolicy)
				require.Len(t, v.Statefulset.VolumeClaimTemplates, len(b.statefulSet.Spec.VolumeClaimTemplates))
				for i, want := range b.statefulSet.Spec.VolumeClaimTemplates {
					assert.Equal(t, want.Name, v.Statefulset.VolumeClaimTemplates[i].Name)
					assert.Equal(t, want.Spec, v.Statefulset.VolumeClaimTemplates[i].Spec)
				}
				assert.Contains(t, c.VolumeMounts, v.ExtraVolumeMounts[0])
			}
		})
	}
}

// checkChartEnv: the chart's extraEnvs set what the variant's env
// ConfigMap sets.
func checkChartEnv(t *testing.T, b *bundle, c *corev1.Container, envs []corev1.EnvVar) {
	t.Helper()
	want := map[string]string{}
	for _, from := range c.EnvFrom {
		for k, v := range b.configMaps[from.ConfigMapRef.Name].Data {
			want[k] = v
		}
	}
	got := map[string]string{}
	for _, e := range envs {
		got[e.Name] = e.Value
	}
	assert.Equal(t, want, got)
}

// checkChartPorts: the ports the chart opens are the container's, and
// every default port of the chart is off.
func checkChartPorts(t *testing.T, c *corev1.Container, ports map[string]chartPort) {
	t.Helper()
	byName := map[string]int32{}
	for _, p := range c.Ports {
		byName[p.Name] = p.ContainerPort
	}
	for name, p := range ports {
		if !p.Enabled {
			continue
		}
		want, ok := byName[name]
		if assert.True(t, ok, "chart port %s is a container port", name) {
			assert.Equal(t, want, p.ContainerPort, "chart port %s", name)
		}
	}
	assert.True(t, ports["sentry"].Enabled)
	for _, name := range []string{"otlp", "otlp-http", "jaeger-compact", "jaeger-thrift", "jaeger-grpc", "zipkin"} {
		p, ok := ports[name]
		assert.True(t, ok && !p.Enabled, "the chart's default port %s is turned off", name)
	}
}

// checkChartProbe: same check as the manifest's probe, the named port
// replaced by its number (the chart renders the port as given).
func checkChartProbe(t *testing.T, want, got *corev1.Probe) {
	t.Helper()
	require.NotNil(t, got.HTTPGet)
	assert.Equal(t, int32(image.HealthPort), got.HTTPGet.Port.IntVal)
	w := want.DeepCopy()
	w.HTTPGet.Port = got.HTTPGet.Port
	assert.Equal(t, w, got)
}

func configJSON(t *testing.T, text string) string {
	t.Helper()
	j, err := yaml.YAMLToJSON([]byte(text))
	require.NoError(t, err)
	return string(j)
}

func toJSON(t *testing.T, v any) string {
	t.Helper()
	j, err := json.Marshal(v)
	require.NoError(t, err)
	return string(j)
}
