package server

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"regexp"
	"sort"
	"strings"
	"time"

	"github.com/sluicehq/sluice/host/plugin"
)

// storedPlugin is an uploaded module that passed the ABI checks, kept by
// its digest.
type storedPlugin struct {
	name     string
	digest   string // "sha256:" + hex
	bin      []byte
	info     plugin.Info
	uploaded time.Time
}

// PluginInfo describes a stored plugin.
type PluginInfo struct {
	Tenant     string    `json:"tenant"`
	Name       string    `json:"name"`
	Digest     string    `json:"digest"` // sha256:<hex>, what a pipeline may name instead of the name
	Size       int       `json:"size"`
	Kind       string    `json:"kind"`
	SDK        string    `json:"sdk,omitempty"`     // from the plugin's sluice_describe
	Outputs    []string  `json:"outputs,omitempty"` // its side-output tags
	Keyed      bool      `json:"keyed,omitempty"`   // it keeps keyed state: a pipeline must key its input
	ABIVersion int       `json:"abi_version"`
	Exports    []string  `json:"exports"`
	MemoryMin  uint64    `json:"memory_min_pages"`
	MemoryMax  uint64    `json:"memory_max_pages,omitempty"`
	Uploaded   time.Time `json:"uploaded"`
	Created    bool      `json:"created"` // on upload: false when the same bytes were already stored
}

var pluginName = regexp.MustCompile(`^[A-Za-z0-9_-]{1,64}$`)

// pluginConfig is the plugin.Config of tenant t's instances: the host's
// (settings.PluginConfig, as every entry point has it) with the tenant's
// instance memory, call timeout, module size and fuel rate, and the
// tenant's fuel pacer, which every plugin host of its jobs shares.
func (s *Server) pluginConfig(t *tenant) plugin.Config {
	cfg := s.cfg.Host.PluginConfig()
	cfg.MemoryLimitPages = t.cfg.InstancePages
	cfg.CallTimeout = t.cfg.CallTimeout
	cfg.MaxModuleBytes = min(cfg.MaxModuleBytes, t.cfg.PluginBytes)
	cfg.FuelRate = cmp.Or(t.cfg.FuelRate, cfg.FuelRate)
	cfg.FuelPacer = t.pacer // the rate is the tenant's, over all its jobs' hosts
	return cfg
}

// UploadCallTimeout caps the call-timeout of the calls an upload makes
// (_initialize and sluice_describe, which answer in milliseconds): an
// upload holds the tenant's and one of the server's parse tokens, and a
// describe spinning to a tenant's full call-timeout held them so long
// that two tenants stalled every other tenant's submissions. The upload's
// calls run on the clock (no call-fuel budget, which the clock does not
// bound) and wait for no fuel-rate (whose waits the call-timeout does not
// count).
var UploadCallTimeout = 2 * time.Second

// uploadLimits are the limits of an upload's calls (UploadCallTimeout).
func uploadLimits(c *plugin.Config) {
	c.CallTimeout = min(c.CallTimeout, UploadCallTimeout)
	c.CallFuel, c.FuelRate, c.FuelPacer = 0, 0, nil
}

// newPluginHost makes a plugin host with t's limits, compiling without
// the cache when its folder cannot be used.
func (s *Server) newPluginHost(ctx context.Context, t *tenant, edit ...func(*plugin.Config)) (*plugin.Host, error) {
	cfg := s.pluginConfig(t)
	for _, e := range edit {
		e(&cfg)
	}
	h, err := plugin.New(ctx, cfg)
	if err != nil && cfg.CacheDir != "" {
		s.log.Warn("compiling plugins without a cache", "error", err)
		cfg.CacheDir = ""
		h, err = plugin.New(ctx, cfg)
	}
	return h, err
}

// UploadPlugin checks bin against ABI v1 and the tenant's limits and
// stores it under name and its sha256 digest. The same bytes uploaded
// again are stored once; a name already used by other bytes now names the
// new ones (the old module is removed).
func (s *Server) UploadPlugin(ctx context.Context, p Principal, name string, bin []byte) (PluginInfo, error) {
	t, err := s.tenantOf(p, "upload plugins")
	if err != nil {
		return PluginInfo{}, err
	}
	if !pluginName.MatchString(name) {
		return PluginInfo{}, errorf(Invalid, "name", "plugin name %q: use 1 to 64 letters, digits, _ and -", name)
	}
	if len(bin) > t.cfg.PluginBytes {
		t.refused.Add(1)
		return PluginInfo{}, errorf(QuotaExceeded, "quota plugin-bytes", "tenant %s: plugin %s is %d bytes, quota %d", t.cfg.Name, name, len(bin), t.cfg.PluginBytes)
	}
	sum := sha256.Sum256(bin)
	digest := "sha256:" + hex.EncodeToString(sum[:])
	if info, ok, err := s.reuse(t, name, digest); ok || err != nil {
		return info, err
	}
	// Compiling is the costliest thing a request can ask for (wazero's
	// compiler cannot be interrupted: seconds for a large module within
	// the compile limits), so uploads share the parse tokens: one pipeline
	// or plugin of a tenant at a time, Config.Parses on the whole server.
	release, err := acquire(ctx, t.parse, "one of tenant "+t.cfg.Name+"'s pipelines or plugins")
	if err != nil {
		return PluginInfo{}, err
	}
	defer release()
	releaseServer, err := acquire(ctx, s.parses, "other pipelines and plugins")
	if err != nil {
		return PluginInfo{}, err
	}
	defer releaseServer()
	// Check before compiling: a fresh host with the tenant's limits, closed
	// at once (the job hosts compile again, from the cache when set).
	h, err := s.newPluginHost(ctx, t, uploadLimits)
	if err != nil {
		return PluginInfo{}, errorf(Internal, "plugin host", "%v", err)
	}
	m, err := h.Load(ctx, name, bin)
	var info plugin.Info
	if err == nil {
		// the plugin's own sluice_describe, as host plugin inspect reads
		// it (one instance under the tenant's limits): the exports alone
		// say "process" for every operator
		info, err = m.Inspect(ctx)
	}
	_ = h.Close(context.Background())
	if err != nil {
		var le *plugin.LoadError
		e := errorf(Unprocessable, "plugin "+name, "not a loadable sluice plugin")
		if errors.As(err, &le) {
			e.Reasons = le.Problems
		} else {
			e.Reasons = []string{err.Error()}
		}
		e.Msg += ": " + strings.Join(e.Reasons, "; ")
		return PluginInfo{}, e
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if info, ok, err := s.reuseLocked(t, name, digest); ok || err != nil {
		return info, err
	}
	if err := countLocked(t, name); err != nil {
		return PluginInfo{}, err
	}
	if old, ok := t.byName[name]; ok {
		delete(t.plugins, old)
	}
	sp := &storedPlugin{name: name, digest: digest, bin: bin, info: info, uploaded: time.Now()}
	t.plugins[digest] = sp
	t.byName[name] = digest
	pi := sp.view(t.cfg.Name)
	pi.Created = true
	return pi, nil
}

// reuse handles bytes already stored, and refuses a new plugin over the
// count quota before it is compiled.
func (s *Server) reuse(t *tenant, name, digest string) (PluginInfo, bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if info, ok, err := s.reuseLocked(t, name, digest); ok || err != nil {
		return info, ok, err
	}
	return PluginInfo{}, false, countLocked(t, name)
}

// countLocked refuses one more plugin (name not yet stored, or naming
// other bytes that it replaces) over the tenant's plugins quota.
func countLocked(t *tenant, name string) error {
	stored := len(t.plugins)
	if _, ok := t.byName[name]; ok {
		stored-- // replaced
	}
	if stored+1 > t.cfg.Plugins {
		t.refused.Add(1)
		return errorf(QuotaExceeded, "quota plugins", "tenant %s: %d plugins stored, quota %d: delete one first (DELETE /v1/plugins/{name})", t.cfg.Name, len(t.plugins), t.cfg.Plugins)
	}
	return nil
}

// reuseLocked handles bytes already stored: under the same name nothing
// changes; under another name it is a Conflict (renaming them silently
// broke every pipeline naming the old name).
func (s *Server) reuseLocked(t *tenant, name, digest string) (PluginInfo, bool, error) {
	sp, ok := t.plugins[digest]
	if !ok {
		return PluginInfo{}, false, nil
	}
	if sp.name != name {
		return PluginInfo{}, false, errorf(Conflict, "plugin "+name,
			"these bytes are stored already as %q (%s): pipelines name them by that name or by the digest; delete %q first to store them under another name",
			sp.name, digest, sp.name)
	}
	return sp.view(t.cfg.Name), true, nil
}

func (sp *storedPlugin) view(tenant string) PluginInfo {
	pi := PluginInfo{Tenant: tenant, Name: sp.name, Digest: sp.digest, Size: len(sp.bin), Kind: string(sp.info.Kind),
		SDK: sp.info.SDK, Outputs: sp.info.Outputs, Keyed: sp.info.Keyed, ABIVersion: sp.info.ABIVersion, MemoryMin: sp.info.Memory.Min, Uploaded: sp.uploaded, Exports: []string{}}
	if sp.info.Memory.HasMax {
		pi.MemoryMax = sp.info.Memory.Max
	}
	for _, e := range sp.info.Exports {
		if e.Kind == "function" {
			pi.Exports = append(pi.Exports, e.Name)
		}
	}
	return pi
}

// digestRef returns ref as a stored digest ("sha256:" and lower-case
// hex) when it is one, in any case (SHA256:<HEX> too).
func digestRef(ref string) (string, bool) {
	const prefix = "sha256:"
	if len(ref) < len(prefix) || !strings.EqualFold(ref[:len(prefix)], prefix) {
		return "", false
	}
	return prefix + strings.ToLower(ref[len(prefix):]), true
}

// lookupLocked finds a tenant's plugin by name or by "sha256:<hex>".
func (t *tenant) lookupLocked(ref string) *storedPlugin {
	if d, ok := digestRef(ref); ok {
		return t.plugins[d]
	}
	if d, ok := t.byName[ref]; ok {
		return t.plugins[d]
	}
	return nil
}

// Plugins lists p's plugins (every tenant's for the admin), by tenant
// then name.
func (s *Server) Plugins(p Principal) []PluginInfo {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []PluginInfo{}
	for _, name := range s.names {
		if !p.Admin && name != p.Tenant {
			continue
		}
		t := s.tenants[name]
		for _, sp := range t.plugins {
			out = append(out, sp.view(name))
		}
	}
	sort.Slice(out, func(a, b int) bool {
		if out[a].Tenant != out[b].Tenant {
			return out[a].Tenant < out[b].Tenant
		}
		return out[a].Name < out[b].Name
	})
	return out
}

// Plugin returns one of p's plugins by name or digest. Another tenant's
// plugin is NotFound; the admin finds any tenant's by digest, or by name
// as "tenant/name".
func (s *Server) Plugin(p Principal, ref string) (PluginInfo, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, sp := s.findPluginLocked(p, ref)
	if sp == nil {
		return PluginInfo{}, errorf(NotFound, "plugin "+ref, "no such plugin")
	}
	return sp.view(t.cfg.Name), nil
}

// DeletePlugin removes one of p's plugins. Running jobs keep the module
// they compiled.
func (s *Server) DeletePlugin(p Principal, ref string) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	t, sp := s.findPluginLocked(p, ref)
	if sp == nil {
		return errorf(NotFound, "plugin "+ref, "no such plugin")
	}
	delete(t.plugins, sp.digest)
	delete(t.byName, sp.name)
	return nil
}

func (s *Server) findPluginLocked(p Principal, ref string) (*tenant, *storedPlugin) {
	if !p.Admin {
		t := s.tenants[p.Tenant]
		if t == nil {
			return nil, nil
		}
		return t, t.lookupLocked(ref)
	}
	if tn, name, ok := strings.Cut(ref, "/"); ok {
		if t := s.tenants[tn]; t != nil {
			return t, t.lookupLocked(name)
		}
		return nil, nil
	}
	for _, name := range s.names {
		t := s.tenants[name]
		if _, ok := digestRef(ref); ok {
			if sp := t.lookupLocked(ref); sp != nil {
				return t, sp
			}
		}
	}
	return nil, nil
}
