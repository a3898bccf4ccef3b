"""Ordering and waiting: SetFlag/WaitFlag, SyncAll, AIC-AIV cross-core flags, and HCCL collectives."""
