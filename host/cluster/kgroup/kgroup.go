// Package kgroup is the Kafka driver of host/cluster: one instance's
// membership in the job's consumer group, sluice.<job>. It speaks Kafka's
// classic group protocol (JoinGroup, SyncGroup, Heartbeat, LeaveGroup)
// through a franz-go client, with protocol type "sluice": each member's
// JoinGroup metadata names its instance and the units it owns (KIP-429's
// owned partitions, for units), the leader assigns them with
// cluster.Balance, and every member feeds the answer to its
// cluster.Member state machine and carries out the actions it returns.
// The group coordinator is the only coordinator: no leader of ours.
//
// Join and Leave are the driver's own actions; Revoke, Abandon, Restore
// and Start go to the Handler, in the order Member returns them, on the
// driver's goroutine.
package kgroup

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/sluicehq/sluice/host/cluster"
)

// ProtocolType and Protocol are what a sluice member joins with; a
// consumer of another protocol type cannot join a job's group.
const (
	ProtocolType = "sluice"
	Protocol     = "sluice-units-v1"
)

// Handler carries out a unit action (Revoke, Abandon, Restore, Start).
// An error ends Run: the instance cannot go on with units it could not
// start or give up.
type Handler interface {
	Do(ctx context.Context, a cluster.Action) error
}

// HandlerFunc is a Handler of a function.
type HandlerFunc func(ctx context.Context, a cluster.Action) error

// Do calls f.
func (f HandlerFunc) Do(ctx context.Context, a cluster.Action) error { return f(ctx, a) }

// Config is one instance's membership.
type Config struct {
	// Client is the franz-go client the group requests go through (kgo
	// routes them to the group's coordinator). Run does not close it.
	Client *kgo.Client
	// Group is the consumer group: cluster.Layout.Group.
	Group string
	// Instance names this instance; every instance of a job has its own.
	Instance string
	// Stages lists each stage's unit ids (cluster.Layout.UnitIDs): what
	// the leader hands out.
	Stages [][]string
	// SessionTimeout (default 10 s) is how long the coordinator waits for
	// a heartbeat before it drops a member (a killed instance's units
	// move after it); RebalanceTimeout (default 10 s) how long a
	// rebalance waits for the members to rejoin; Heartbeat (default a
	// third of the session timeout) how often a member heartbeats.
	SessionTimeout, RebalanceTimeout, Heartbeat time.Duration
	// Checkpoints gives the last completed checkpoint of each of units
	// (0 or absent: none), read from shared storage when an assignment
	// arrives; nil: none. An error (checkpoints that exist but cannot be
	// read) ends Run: a unit must not start afresh over state it had.
	Checkpoints func(units []string) (map[string]int64, error)
	// Handler carries out the unit actions.
	Handler Handler
	// OnAssigned, when set, is called after each assignment has been
	// carried out, with the generation, the units now owned and the
	// rebalance's length: from the moment the member learned of it (a
	// heartbeat's REBALANCE_IN_PROGRESS, its own rejoin, its start) to now.
	OnAssigned func(generation int, owned []string, rebalance time.Duration)
}

// Driver is one instance's member of the group.
type Driver struct {
	cfg      Config
	member   *cluster.Member
	memberID string
	gen      int32
	leader   bool

	mu    sync.Mutex
	owned []string
	gens  int
}

// New makes the driver of cfg; Run runs it.
func New(cfg Config) (*Driver, error) {
	if cfg.Client == nil || cfg.Group == "" || cfg.Instance == "" || cfg.Handler == nil {
		return nil, errors.New("kgroup: a driver needs a client, a group, an instance name and a handler")
	}
	if cfg.SessionTimeout <= 0 {
		cfg.SessionTimeout = 10 * time.Second
	}
	if cfg.RebalanceTimeout <= 0 {
		cfg.RebalanceTimeout = 10 * time.Second
	}
	if cfg.Heartbeat <= 0 {
		cfg.Heartbeat = cfg.SessionTimeout / 3
	}
	return &Driver{cfg: cfg}, nil
}

// Owned is what the instance owns now, as it reports it.
func (d *Driver) Owned() []string {
	d.mu.Lock()
	defer d.mu.Unlock()
	return slices.Clone(d.owned)
}

// Rebalances counts the assignments the instance took.
func (d *Driver) Rebalances() int {
	d.mu.Lock()
	defer d.mu.Unlock()
	return d.gens
}

// metadata is a member's JoinGroup metadata.
type metadata struct {
	Instance string   `json:"instance"`
	Owned    []string `json:"owned"`
}

// assignment is a member's SyncGroup assignment.
type assignment struct {
	Generation int32    `json:"generation"`
	Units      []string `json:"units"`
}

// errLost: the coordinator no longer knows this member.
var errLost = errors.New("membership lost")

// Run joins the group and follows its rebalances until ctx is done; then
// it revokes everything (Member's Stop) and leaves the group, with a
// context of its own for the revokes and the LeaveGroup. It returns the
// first error of the handler, or of the group that is not a rebalance or
// a lost membership (those are followed).
func (d *Driver) Run(ctx context.Context) error {
	m, pending := cluster.NewMember(d.cfg.Instance)
	d.member = m
	join, assigned := false, false
	began := time.Now() // when the rebalance under way began
	stopCtx, stopCancel := context.WithCancel(context.Background())
	defer stopCancel()
	for {
		for _, a := range pending {
			switch a.Kind {
			case cluster.Join:
				join = true
			case cluster.Leave:
				d.report()
				d.leave()
				return nil
			default:
				hctx := ctx
				if ctx.Err() != nil { // stopping: the revokes still commit
					hctx = stopCtx
				}
				var err error
				d.busy(func() { err = d.cfg.Handler.Do(hctx, a) })
				if err != nil {
					return fmt.Errorf("instance %s: %s %v: %w", d.cfg.Instance, a.Kind, a.Units, err)
				}
			}
		}
		pending = nil
		d.report()
		if assigned && d.cfg.OnAssigned != nil {
			d.cfg.OnAssigned(d.member.Generation(), d.member.Owned(), time.Since(began))
		}
		if assigned {
			began = time.Time{}
		}
		assigned = false
		if ctx.Err() != nil {
			pending = d.member.Step(cluster.Event{Kind: cluster.Stop})
			continue
		}
		if join {
			if began.IsZero() {
				began = time.Now()
			}
			gen, units, err := d.joinSync(ctx)
			switch {
			case err == nil:
				join, assigned = false, true
				var cps map[string]int64
				if d.cfg.Checkpoints != nil {
					var err error
					d.busy(func() { cps, err = d.cfg.Checkpoints(units) })
					if err != nil {
						d.leave()
						return fmt.Errorf("instance %s: %w", d.cfg.Instance, err)
					}
				}
				pending = d.member.Step(cluster.Event{Kind: cluster.Assigned, Generation: int(gen), Units: units, Checkpoints: cps})
				d.mu.Lock()
				d.gens++
				d.mu.Unlock()
			case errors.Is(err, errLost):
				pending = d.member.Step(cluster.Event{Kind: cluster.Lost})
			case ctx.Err() != nil:
			case errors.Is(err, kerr.RebalanceInProgress):
			default:
				if !retriable(err) {
					return fmt.Errorf("instance %s: joining group %s: %w", d.cfg.Instance, d.cfg.Group, err)
				}
				sleep(ctx, 200*time.Millisecond)
			}
			continue
		}
		// heartbeat until a rebalance, a lost membership or the end
		err := d.heartbeat(ctx)
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, errLost):
			pending = d.member.Step(cluster.Event{Kind: cluster.Lost})
		default:
			join = true // a rebalance, or a failed heartbeat: rejoin owning what we own
		}
	}
}

func (d *Driver) report() {
	d.mu.Lock()
	d.owned = d.member.Owned()
	d.mu.Unlock()
}

func sleep(ctx context.Context, t time.Duration) {
	select {
	case <-ctx.Done():
	case <-time.After(t):
	}
}

func retriable(err error) bool {
	if errors.Is(err, kgo.ErrClientClosed) {
		return false
	}
	var ke *kerr.Error
	if errors.As(err, &ke) {
		return ke.Retriable || errors.Is(err, kerr.CoordinatorNotAvailable) || errors.Is(err, kerr.NotCoordinator) || errors.Is(err, kerr.CoordinatorLoadInProgress)
	}
	return true // a network error: the client retries its connections
}

// lostCode says whether a group error means the member is gone.
func lostErr(err error) bool {
	return errors.Is(err, kerr.UnknownMemberID) || errors.Is(err, kerr.IllegalGeneration) || errors.Is(err, kerr.FencedInstanceID)
}

// joinSync runs one JoinGroup and SyncGroup round; the leader assigns.
func (d *Driver) joinSync(ctx context.Context) (int32, []string, error) {
	meta, _ := json.Marshal(metadata{Instance: d.cfg.Instance, Owned: d.member.Owned()})
	for {
		req := kmsg.NewPtrJoinGroupRequest()
		req.Group = d.cfg.Group
		req.SessionTimeoutMillis = int32(d.cfg.SessionTimeout.Milliseconds())
		req.RebalanceTimeoutMillis = int32(d.cfg.RebalanceTimeout.Milliseconds())
		req.MemberID = d.memberID
		req.ProtocolType = ProtocolType
		proto := kmsg.NewJoinGroupRequestProtocol()
		proto.Name, proto.Metadata = Protocol, meta
		req.Protocols = append(req.Protocols, proto)
		reason := "sluice instance " + d.cfg.Instance + " joins owning its units"
		req.Reason = &reason
		jctx, cancel := context.WithTimeout(ctx, d.cfg.RebalanceTimeout+d.cfg.SessionTimeout)
		resp, err := req.RequestWith(jctx, d.cfg.Client)
		cancel()
		if err != nil {
			return 0, nil, err
		}
		if err := kerr.ErrorForCode(resp.ErrorCode); err != nil {
			if errors.Is(err, kerr.MemberIDRequired) {
				d.memberID = resp.MemberID
				continue
			}
			if errors.Is(err, kerr.UnknownMemberID) {
				d.memberID = ""
				return 0, nil, errLost
			}
			return 0, nil, err
		}
		d.memberID, d.gen = resp.MemberID, resp.Generation
		d.leader = resp.LeaderID == resp.MemberID
		var plan []kmsg.SyncGroupRequestGroupAssignment
		if d.leader {
			if plan, err = d.balance(resp); err != nil {
				return 0, nil, err
			}
		}
		sreq := kmsg.NewPtrSyncGroupRequest()
		sreq.Group, sreq.Generation, sreq.MemberID = d.cfg.Group, resp.Generation, resp.MemberID
		pt, pn := ProtocolType, Protocol
		sreq.ProtocolType, sreq.Protocol = &pt, &pn
		sreq.GroupAssignment = plan
		sctx, scancel := context.WithTimeout(ctx, d.cfg.RebalanceTimeout+d.cfg.SessionTimeout)
		sresp, err := sreq.RequestWith(sctx, d.cfg.Client)
		scancel()
		if err != nil {
			return 0, nil, err
		}
		if err := kerr.ErrorForCode(sresp.ErrorCode); err != nil {
			if lostErr(err) {
				d.memberID = ""
				return 0, nil, errLost
			}
			return 0, nil, err
		}
		var a assignment
		if len(sresp.MemberAssignment) > 0 {
			if err := json.Unmarshal(sresp.MemberAssignment, &a); err != nil {
				return 0, nil, fmt.Errorf("the leader's assignment does not read: %w", err)
			}
		}
		return resp.Generation, a.Units, nil
	}
}

// balance is the leader's part: cluster.Balance over the members'
// metadata, each member's units into its SyncGroup assignment.
func (d *Driver) balance(resp *kmsg.JoinGroupResponse) ([]kmsg.SyncGroupRequestGroupAssignment, error) {
	subs := make([]cluster.Subscription, 0, len(resp.Members))
	idOf := map[string]string{} // instance -> member id (the first, as Balance keeps the first)
	var ids []string
	for _, mem := range resp.Members {
		var md metadata
		if err := json.Unmarshal(mem.ProtocolMetadata, &md); err != nil || md.Instance == "" {
			return nil, fmt.Errorf("member %s of group %s joined with metadata that is not a sluice member's: %q", mem.MemberID, d.cfg.Group, mem.ProtocolMetadata)
		}
		subs = append(subs, cluster.Subscription{Member: md.Instance, Owned: md.Owned})
		if _, ok := idOf[md.Instance]; !ok {
			idOf[md.Instance] = mem.MemberID
		}
		ids = append(ids, mem.MemberID)
	}
	units := cluster.Balance(d.cfg.Stages, subs)
	byID := map[string][]string{}
	for inst, us := range units {
		byID[idOf[inst]] = us
	}
	out := make([]kmsg.SyncGroupRequestGroupAssignment, 0, len(ids))
	for _, id := range ids {
		b, _ := json.Marshal(assignment{Generation: resp.Generation, Units: append([]string{}, byID[id]...)})
		a := kmsg.NewSyncGroupRequestGroupAssignment()
		a.MemberID, a.MemberAssignment = id, b
		out = append(out, a)
	}
	return out, nil
}

// heartbeat heartbeats until the group rebalances (nil), the member is
// lost (errLost), a heartbeat fails otherwise (that error) or ctx ends.
func (d *Driver) heartbeat(ctx context.Context) error {
	t := time.NewTicker(d.cfg.Heartbeat)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-t.C:
		}
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID = d.cfg.Group, d.gen, d.memberID
		hctx, cancel := context.WithTimeout(ctx, d.cfg.SessionTimeout)
		resp, err := req.RequestWith(hctx, d.cfg.Client)
		cancel()
		if err == nil {
			err = kerr.ErrorForCode(resp.ErrorCode)
		}
		switch {
		case err == nil:
			continue
		case errors.Is(err, kerr.RebalanceInProgress):
			return nil
		case lostErr(err):
			d.memberID = ""
			return errLost
		case ctx.Err() != nil:
			return ctx.Err()
		}
		return err
	}
}

// busy runs fn (a unit action, or reading the units' checkpoints) while a
// goroutine heartbeats, as a Kafka consumer's heartbeat thread does:
// starting or revoking many units (Wasm set-up, checkpoint reads, a
// unit's drain) can take longer than the session timeout, and a member
// that stops heartbeating meanwhile is dropped while it still runs its
// units, which then run on two instances. The heartbeats' answers (a
// rebalance, a lost membership) are left to the next heartbeat of Run's
// loop, which asks again once fn is done. Nothing else touches d while
// fn runs.
func (d *Driver) busy(fn func()) {
	if d.memberID == "" {
		fn()
		return
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		t := time.NewTicker(d.cfg.Heartbeat)
		defer t.Stop()
		req := kmsg.NewPtrHeartbeatRequest()
		req.Group, req.Generation, req.MemberID = d.cfg.Group, d.gen, d.memberID
		for {
			select {
			case <-ctx.Done():
				return
			case <-t.C:
			}
			hctx, hcancel := context.WithTimeout(ctx, d.cfg.SessionTimeout)
			_, _ = req.RequestWith(hctx, d.cfg.Client)
			hcancel()
		}
	}()
	fn()
	cancel()
	wg.Wait()
}

// leave sends LeaveGroup, with a context of its own (Run's has ended).
func (d *Driver) leave() {
	if d.memberID == "" {
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	req := kmsg.NewPtrLeaveGroupRequest()
	req.Group, req.MemberID = d.cfg.Group, d.memberID
	mem := kmsg.NewLeaveGroupRequestMember()
	mem.MemberID = d.memberID
	reason := "sluice instance " + d.cfg.Instance + " stops"
	mem.Reason = &reason
	req.Members = append(req.Members, mem)
	_, _ = req.RequestWith(ctx, d.cfg.Client)
	d.memberID = ""
}
