// The host functions of ABI v1 (module "sluice_v1", abi/abi.go). Pointers
// are offsets in this module's memory; the host copies before returning.

// @ts-ignore: decorator
@external("sluice_v1", "emit")
export declare function hostEmit(port: i32, ptr: usize, len: i32, count: i32): i32;

// emit with the end of each record: count little-endian u32 at ends
// (abi.ImportEmitEnds)
// @ts-ignore: decorator
@external("sluice_v1", "emit_ends")
export declare function hostEmitEnds(port: i32, ptr: usize, len: i32, count: i32, ends: usize): i32;

// @ts-ignore: decorator
@external("sluice_v1", "port")
export declare function hostPort(ptr: usize, len: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "error")
export declare function hostError(ptr: usize, len: i32): void;

// @ts-ignore: decorator
@external("sluice_v1", "state_get")
export declare function hostStateGet(slot: i32, kp: usize, kl: i32, bp: usize, bc: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_put")
export declare function hostStatePut(slot: i32, kp: usize, kl: i32, vp: usize, vl: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_del")
export declare function hostStateDel(slot: i32, kp: usize, kl: i32): i32;

// Optional: list and map state (abi.ImportStateListGet and the rest). A
// module imports only those its plugin calls.

// @ts-ignore: decorator
@external("sluice_v1", "state_list_get")
export declare function hostListGet(slot: i32, kp: usize, kl: i32, bp: usize, bc: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_list_append")
export declare function hostListAppend(slot: i32, kp: usize, kl: i32, vp: usize, vl: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_list_update")
export declare function hostListUpdate(slot: i32, kp: usize, kl: i32, wp: usize, wl: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_map_get")
export declare function hostMapGet(slot: i32, kp: usize, kl: i32, up: usize, ul: i32, bp: usize, bc: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_map_put")
export declare function hostMapPut(slot: i32, kp: usize, kl: i32, up: usize, ul: i32, vp: usize, vl: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_map_del")
export declare function hostMapDel(slot: i32, kp: usize, kl: i32, up: usize, ul: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_map_contains")
export declare function hostMapContains(slot: i32, kp: usize, kl: i32, up: usize, ul: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_map_entries")
export declare function hostMapEntries(slot: i32, kp: usize, kl: i32, bp: usize, bc: i32): i32;

// @ts-ignore: decorator
@external("sluice_v1", "state_clear")
export declare function hostStateClear(slot: i32, kp: usize, kl: i32): i32;

// Optional: timers (abi/timers.go). A module imports only those its
// plugin calls.

// @ts-ignore: decorator
@external("sluice_v1", "timer_register")
export declare function hostTimerRegister(kind: i32, kp: usize, kl: i32, ts: i64): i32;

// @ts-ignore: decorator
@external("sluice_v1", "timer_delete")
export declare function hostTimerDelete(kind: i32, kp: usize, kl: i32, ts: i64): i32;

// @ts-ignore: decorator
@external("sluice_v1", "current_watermark")
export declare function hostCurrentWatermark(): i64;

// @ts-ignore: decorator
@external("sluice_v1", "current_processing_time")
export declare function hostCurrentProcessingTime(): i64;
