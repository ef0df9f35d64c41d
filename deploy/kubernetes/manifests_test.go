package kubernetes

import (
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/util/validation"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"

	"github.com/sentryprofile/otelcol-sentryprofile/deploy/image"
)

// TestStrictDecoding proves the decoder refuses what the API server's
// strict field validation refuses, so that a typo in a manifest fails
// TestManifests.
func TestStrictDecoding(t *testing.T) {
	cases := []struct {
		name, doc, want string
	}{
		{"valid", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: 80}]}\n", ""},
		{"unknown field", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {sessionAfinity: ClientIP}\n", `unknown field "spec.sessionAfinity"`},
		{"duplicate field", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec:\n  type: ClusterIP\n  type: NodePort\n", `key "type" already set`},
		{"wrong type", "apiVersion: v1\nkind: Service\nmetadata: {name: s}\nspec: {ports: [{port: eighty}]}\n", "cannot unmarshal"},
		{"bad quantity", "apiVersion: v1\nkind: Pod\nmetadata: {name: p}\nspec: {containers: [{name: c, resources: {limits: {memory: lots}}}]}\n", "quantities must match"},
		{"unknown kind", "apiVersion: v1\nkind: Servise\nmetadata: {name: s}\n", "no kind"},
	}
	dec := strictDecoder(t)
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, _, err := dec.Decode([]byte(tc.doc), nil, nil)
			if tc.want == "" {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			assert.Contains(t, err.Error(), tc.want)
		})
	}
}

// TestManifests decodes every object of each variant strictly and checks
// that the objects agree with each other, with the collector configuration
// they carry and with the image.
func TestManifests(t *testing.T) {
	for _, dir := range variants {
		t.Run(dir, func(t *testing.T) {
			b := loadBundle(t, dir)
			tmpl, selector := b.pod(t)
			require.Len(t, tmpl.Spec.Containers, 1)
			c := &tmpl.Spec.Containers[0]
			cfg := configOf(t, b, tmpl, c)

			checkNames(t, b)
			assert.True(t, labels.SelectorFromSet(selector).Matches(labels.Set(tmpl.Labels)), "the workload's selector matches its pods")
			checkServices(t, b, tmpl, c)
			checkPorts(t, c, cfg)
			checkProbes(t, c)
			checkSecurity(t, &tmpl.Spec, c)
			checkResources(t, c, cfg)
			checkTermination(t, &tmpl.Spec, c, cfg)
			checkEnvironment(t, b, c, cfg)
			checkBudgets(t, b, tmpl)
			if b.statefulSet != nil {
				checkSpoolVolume(t, b, c, cfg)
			}
		})
	}
}

// configOf parses the configuration the container starts with.
func configOf(t *testing.T, b *bundle, tmpl *corev1.PodTemplateSpec, c *corev1.Container) *collectorConfig {
	t.Helper()
	cfg, err := parseCollectorConfig(configText(t, b, tmpl, c))
	require.NoError(t, err)
	return cfg
}

// configText finds the configuration the container starts with: the
// --config argument, under the mount of a ConfigMap volume of the bundle.
func configText(t *testing.T, b *bundle, tmpl *corev1.PodTemplateSpec, c *corev1.Container) string {
	t.Helper()
	assert.Equal(t, "otelcol-sentryprofile", c.Image, "the image name the kustomization's images: entry rewrites")
	assert.Contains(t, c.Args, image.FeatureGates)
	var path string
	for _, a := range c.Args {
		if p, ok := strings.CutPrefix(a, "--config="); ok {
			path = p
		}
	}
	require.NotEmpty(t, path, "--config argument")
	assert.Equal(t, image.ConfigPath, path, "the same path as the image's default, so that the image's default command works too")
	for _, m := range c.VolumeMounts {
		if filepath.Dir(path) != m.MountPath {
			continue
		}
		for _, v := range tmpl.Spec.Volumes {
			if v.Name != m.Name || v.ConfigMap == nil {
				continue
			}
			cm, ok := b.configMaps[v.ConfigMap.Name]
			require.True(t, ok, "ConfigMap %s of volume %s is in the kustomization", v.ConfigMap.Name, v.Name)
			text, ok := cm.Data[filepath.Base(path)]
			require.True(t, ok, "ConfigMap %s has the key %s", cm.Name, filepath.Base(path))
			return text
		}
	}
	t.Fatalf("no ConfigMap volume is mounted at %s", filepath.Dir(path))
	return ""
}

// checkNames applies the API server's own name and label rules.
func checkNames(t *testing.T, b *bundle) {
	t.Helper()
	for _, obj := range b.objects {
		m, ok := obj.(metav1.Object)
		require.True(t, ok)
		assert.Empty(t, validation.IsDNS1123Subdomain(m.GetName()), "name %q", m.GetName())
		for k, v := range m.GetLabels() {
			assert.Empty(t, validation.IsQualifiedName(k), "label key %q", k)
			assert.Empty(t, validation.IsValidLabelValue(v), "label value %q", v)
		}
	}
	for _, s := range b.services {
		assert.Empty(t, validation.IsDNS1035Label(s.Name), "a Service name is a DNS-1035 label: %q", s.Name)
	}
}

// checkServices: every Service selects the workload's pods and targets
// ports the container names; the SDKs' Service keeps a client on one pod.
func checkServices(t *testing.T, b *bundle, tmpl *corev1.PodTemplateSpec, c *corev1.Container) {
	t.Helper()
	require.NotEmpty(t, b.services)
	var sentryService bool
	for _, s := range b.services {
		assert.True(t, labels.SelectorFromSet(s.Spec.Selector).Matches(labels.Set(tmpl.Labels)), "Service %s selects the pods", s.Name)
		for _, p := range s.Spec.Ports {
			assert.Empty(t, validation.IsValidPortName(p.Name), "Service %s port name %q", s.Name, p.Name)
			assert.True(t, slices.ContainsFunc(c.Ports, func(cp corev1.ContainerPort) bool { return cp.Name == p.TargetPort.StrVal }),
				"Service %s targets the container port named %q", s.Name, p.TargetPort.StrVal)
			if p.Name == "sentry" {
				sentryService = true
				assert.Equal(t, corev1.ServiceAffinityClientIP, s.Spec.SessionAffinity, "Service %s keeps one SDK process on one replica", s.Name)
			}
		}
	}
	assert.True(t, sentryService, "a Service exposes the sentry port")
	if ss := b.statefulSet; ss != nil {
		i := slices.IndexFunc(b.services, func(s *corev1.Service) bool { return s.Name == ss.Spec.ServiceName })
		require.GreaterOrEqual(t, i, 0, "the StatefulSet's serviceName %s is in the kustomization", ss.Spec.ServiceName)
		assert.Equal(t, corev1.ClusterIPNone, b.services[i].Spec.ClusterIP, "the StatefulSet's Service is headless")
	}
}

// checkPorts: the container's ports are the ones the configuration
// listens on, on every interface, and the ones the image exposes.
func checkPorts(t *testing.T, c *corev1.Container, cfg *collectorConfig) {
	t.Helper()
	want := map[string]int{}
	var err error
	want["sentry"], err = listenPort(cfg.Receivers.Sentry.Endpoint)
	require.NoError(t, err)
	want["health"], err = listenPort(cfg.Extensions.HealthCheck.Endpoint)
	require.NoError(t, err)
	readers := cfg.Service.Telemetry.Metrics.Readers
	require.Len(t, readers, 1, "one Prometheus reader")
	prom := readers[0].Pull.Exporter.Prometheus
	assert.Equal(t, "0.0.0.0", prom.Host)
	want["metrics"] = prom.Port
	got := map[string]int{}
	for _, p := range c.Ports {
		assert.Empty(t, validation.IsValidPortName(p.Name), "port name %q", p.Name)
		got[p.Name] = int(p.ContainerPort)
	}
	assert.Equal(t, want, got)
	assert.Equal(t, map[string]int{"sentry": image.SentryPort, "health": image.HealthPort, "metrics": image.TelemetryPort}, got,
		"the ports the image exposes")
}

// checkProbes: readiness and liveness ask the health check extension.
func checkProbes(t *testing.T, c *corev1.Container) {
	t.Helper()
	for name, p := range map[string]*corev1.Probe{"readiness": c.ReadinessProbe, "liveness": c.LivenessProbe} {
		require.NotNil(t, p, "%s probe", name)
		require.NotNil(t, p.HTTPGet, "%s probe is an HTTP GET", name)
		assert.Equal(t, "/", p.HTTPGet.Path, "%s probe path", name)
		assert.Equal(t, "health", p.HTTPGet.Port.StrVal, "%s probe port", name)
	}
	assert.Less(t, c.ReadinessProbe.PeriodSeconds*c.ReadinessProbe.FailureThreshold,
		c.LivenessProbe.PeriodSeconds*c.LivenessProbe.FailureThreshold, "a pod leaves the Service before it is restarted")
}

// checkSecurity: non-root as the image's user, nothing writable but
// volumes, no privileges: the "restricted" Pod Security Standard.
func checkSecurity(t *testing.T, pod *corev1.PodSpec, c *corev1.Container) {
	t.Helper()
	psc := pod.SecurityContext
	require.NotNil(t, psc)
	assert.Equal(t, ptr(true), psc.RunAsNonRoot)
	assert.Equal(t, ptr(int64(image.UID)), psc.RunAsUser)
	assert.Equal(t, ptr(int64(image.GID)), psc.RunAsGroup)
	require.NotNil(t, psc.SeccompProfile)
	assert.Equal(t, corev1.SeccompProfileTypeRuntimeDefault, psc.SeccompProfile.Type)
	sc := c.SecurityContext
	require.NotNil(t, sc)
	assert.Equal(t, ptr(false), sc.AllowPrivilegeEscalation)
	assert.Equal(t, ptr(true), sc.ReadOnlyRootFilesystem)
	require.NotNil(t, sc.Capabilities)
	assert.Equal(t, []corev1.Capability{"ALL"}, sc.Capabilities.Drop)
	assert.Equal(t, ptr(false), pod.AutomountServiceAccountToken, "the collector needs no Kubernetes API access")
}

// checkResources: requests and a memory limit are set, and GOMEMLIMIT
// sits between the memory limiter's soft limit and the container's limit.
func checkResources(t *testing.T, c *corev1.Container, cfg *collectorConfig) {
	t.Helper()
	req, lim := c.Resources.Requests, c.Resources.Limits
	require.False(t, req.Cpu().IsZero(), "a CPU request")
	require.False(t, req.Memory().IsZero(), "a memory request")
	require.False(t, lim.Memory().IsZero(), "a memory limit: memory_limiter and GOMEMLIMIT are relative to it")
	assert.LessOrEqual(t, req.Memory().Cmp(*lim.Memory()), 0, "memory request ≤ limit")
	limit := lim.Memory().Value()

	ml := cfg.Processors.MemoryLimiter
	require.NotNil(t, ml, "memory_limiter in the pipeline")
	soft := limit * int64(ml.LimitPercentage-ml.SpikeLimitPercentage) / 100
	var goMemLimit int64
	for _, e := range c.Env {
		if e.Name == "GOMEMLIMIT" {
			var err error
			goMemLimit, err = parseGoMemLimit(e.Value)
			require.NoError(t, err)
		}
	}
	require.NotZero(t, goMemLimit, "GOMEMLIMIT is set")
	assert.Less(t, goMemLimit, limit*85/100, "GOMEMLIMIT leaves room below the container limit")
	assert.Greater(t, goMemLimit, soft, "GOMEMLIMIT above the memory limiter's soft limit (refusals start first)")
	// The measured peak RSS under load (BENCHMARKS.md, session 3: 243 MiB)
	// stays below the soft limit: at that load nothing is refused.
	peak := resource.MustParse("243Mi")
	assert.Greater(t, soft, peak.Value(), "soft limit above the measured peak")
}

// checkTermination: a pod is given time to leave the load balancers
// (preStop) and then to shut down as its configuration bounds it.
func checkTermination(t *testing.T, pod *corev1.PodSpec, c *corev1.Container, cfg *collectorConfig) {
	t.Helper()
	require.NotNil(t, c.Lifecycle)
	require.NotNil(t, c.Lifecycle.PreStop)
	require.NotNil(t, c.Lifecycle.PreStop.Sleep, "preStop sleeps in the kubelet: the image has no shell")
	preStop := time.Duration(c.Lifecycle.PreStop.Sleep.Seconds) * time.Second
	assert.GreaterOrEqual(t, preStop, 5*time.Second)
	bound, err := cfg.shutdownBound()
	require.NoError(t, err)
	require.NotNil(t, pod.TerminationGracePeriodSeconds)
	grace := time.Duration(*pod.TerminationGracePeriodSeconds) * time.Second
	assert.GreaterOrEqual(t, grace, preStop+bound+5*time.Second,
		"grace period covers preStop %s + shutdown %s + 5 s", preStop, bound)
}

// checkEnvironment: every ${env:…} the configuration reads is set.
func checkEnvironment(t *testing.T, b *bundle, c *corev1.Container, cfg *collectorConfig) {
	t.Helper()
	have := map[string]bool{}
	for _, e := range c.Env {
		have[e.Name] = true
	}
	for _, from := range c.EnvFrom {
		require.NotNil(t, from.ConfigMapRef)
		cm, ok := b.configMaps[from.ConfigMapRef.Name]
		require.True(t, ok, "envFrom ConfigMap %s is in the kustomization", from.ConfigMapRef.Name)
		for k := range cm.Data {
			have[k] = true
		}
	}
	for _, v := range cfg.envVars {
		assert.True(t, have[v], "the configuration reads ${env:%s}; the container sets it", v)
	}
}

// checkBudgets: the disruption budget covers the pods and never blocks
// every eviction.
func checkBudgets(t *testing.T, b *bundle, tmpl *corev1.PodTemplateSpec) {
	t.Helper()
	require.Len(t, b.budgets, 1)
	sel, err := metav1.LabelSelectorAsSelector(b.budgets[0].Spec.Selector)
	require.NoError(t, err)
	assert.True(t, sel.Matches(labels.Set(tmpl.Labels)), "the PodDisruptionBudget selects the pods")
	require.NotNil(t, b.budgets[0].Spec.MaxUnavailable)
	assert.Positive(t, b.budgets[0].Spec.MaxUnavailable.IntValue())
}

// checkSpoolVolume: the spool's directory is on the replica's own
// PersistentVolume, writable by the image's group.
func checkSpoolVolume(t *testing.T, b *bundle, c *corev1.Container, cfg *collectorConfig) {
	t.Helper()
	fwd := cfg.Receivers.Sentry.Forward
	require.NotNil(t, fwd, "relay-through forwards")
	assert.Equal(t, "file_storage", fwd.Storage)
	require.NotNil(t, cfg.Extensions.FileStorage)
	dir := cfg.Extensions.FileStorage.Directory
	var onClaim bool
	for _, m := range c.VolumeMounts {
		if dir != m.MountPath && !strings.HasPrefix(dir, m.MountPath+"/") {
			continue
		}
		onClaim = slices.ContainsFunc(b.statefulSet.Spec.VolumeClaimTemplates, func(p corev1.PersistentVolumeClaim) bool {
			return p.Name == m.Name
		})
		assert.False(t, m.ReadOnly)
	}
	assert.True(t, onClaim, "file_storage directory %s is on a volumeClaimTemplate's mount", dir)
	assert.Equal(t, ptr(int64(image.GID)), b.statefulSet.Spec.Template.Spec.SecurityContext.FSGroup)
	for _, p := range b.statefulSet.Spec.VolumeClaimTemplates {
		assert.False(t, p.Spec.Resources.Requests.Storage().IsZero(), "claim %s has a size", p.Name)
	}
}

// distVersion reads the distribution's version from ocb's manifest: the
// tag `make image` gives the image.
func distVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../builder-config.yaml")
	require.NoError(t, err)
	var cfg struct {
		Dist struct {
			Version string `json:"version"`
		} `json:"dist"`
	}
	require.NoError(t, yaml.Unmarshal(raw, &cfg))
	require.NotEmpty(t, cfg.Dist.Version)
	return cfg.Dist.Version
}

// TestKustomizeBuild builds each variant with kustomize's own library (as
// `kubectl apply -k` does), offline, and decodes its output strictly.
func TestKustomizeBuild(t *testing.T) {
	dec := strictDecoder(t)
	for _, dir := range variants {
		t.Run(dir, func(t *testing.T) {
			b := loadBundle(t, dir)
			abs, err := filepath.Abs(dir)
			require.NoError(t, err)
			out, err := krusty.MakeKustomizer(krusty.MakeDefaultOptions()).Run(filesys.MakeFsOnDisk(), abs)
			require.NoError(t, err)
			require.Equal(t, b.documentsRaw, out.Size(), "kustomize emits every object")
			for _, r := range out.Resources() {
				y, err := r.AsYAML()
				require.NoError(t, err)
				obj, _, err := dec.Decode(y, nil, nil)
				require.NoError(t, err, "%s", r.CurId())
				m := obj.(metav1.Object)
				assert.Equal(t, "otelcol-sentryprofile", m.GetLabels()["app.kubernetes.io/part-of"], "%s", r.CurId())
				if r.GetKind() != "Namespace" {
					assert.Equal(t, "otelcol-sentryprofile", m.GetNamespace(), "%s", r.CurId())
				}
				if r.GetKind() == "Deployment" || r.GetKind() == "StatefulSet" {
					assert.Contains(t, string(y), "image: otelcol-sentryprofile:"+distVersion(t)+"\n",
						"the images: entry sets the tag make image gives")
				}
			}
		})
	}
}

// TestManifestConfigs runs the built collector's `validate` on every
// configuration the manifests carry, with the environment they set. `make
// image-test` runs it with OTELCOL_BIN.
func TestManifestConfigs(t *testing.T) {
	bin := os.Getenv("OTELCOL_BIN")
	if bin == "" {
		t.Skip("OTELCOL_BIN is not set: `make image-test` runs this with the built collector")
	}
	for _, dir := range variants {
		t.Run(dir, func(t *testing.T) {
			b := loadBundle(t, dir)
			tmpl, _ := b.pod(t)
			c := &tmpl.Spec.Containers[0]
			text := configText(t, b, tmpl, c)
			env := []string{}
			for _, from := range c.EnvFrom {
				for k, v := range b.configMaps[from.ConfigMapRef.Name].Data {
					env = append(env, k+"="+v)
				}
			}
			validateWithCollector(t, bin, text, env)
		})
	}
}

// validateWithCollector runs `validate` of the built collector on a
// configuration, with env added to the environment.
func validateWithCollector(t *testing.T, bin, config string, env []string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "config.yaml")
	require.NoError(t, os.WriteFile(path, []byte(config), 0o600))
	cmd := exec.Command(bin, "validate", "--config="+path, image.FeatureGates)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s validate:\n%s", bin, out)
}

func ptr[T any](v T) *T { return &v }
