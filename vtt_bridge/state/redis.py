"""The scale-out store: Redis, shared by several server processes.

Layout, all under a prefix (``vtt:`` by default). Every key of a table carries
the table id as a hash tag (``{<table>}``), so under Redis Cluster a table's
keys share one slot and its Lua scripts run on one node::

    tables                  hash  table id → table JSON
    epoch                   str   written once, when the store is first used (see :meth:`RedisStore.ping`)
    packs                   hash  process → {packs, until}: the pack set each live process runs
    t:{<table>}:keys        hash  user → {digest, created}
    t:{<table>}:tokens      hash  token id → token JSON (with its version)
    t:{<table>}:audit       list  the newest audit entries (at most the table's ``audit_keep``)
    t:{<table>}:trimmed     int   how many of the oldest entries were dropped: entry n has
                                  seq trimmed + (its place in the list, from 1)
    t:{<table>}:meta        list  "request_id<TAB>ref" of each entry in the list, to forget them with it
    t:{<table>}:keep        int   the table's audit_keep setting, when it has one
    t:{<table>}:requests    hash  request_id → seq (of the entries still kept)
    t:{<table>}:refs        hash  attack id → JSON list of seqs (of the entries still kept)
    t:{<table>}:rev         int   bumped by every commit and settings change
    t:{<table>}:lease       str   the attack lease: who holds it (expires)
    t:{<table>}:lease:want  str   the first waiter for the lease, whom it goes to next (expires)
    t:{<table>}:lease:next  str   that waiter's attack's token locks, taken for it as the lease
                                  goes to it (JSON, expires with its claim; see _TAKE)
    t:{<table>}:locked      hash  the attack in progress's token locks: "" → the lease holder
                                  that took them, token id → attack id (held while that holder
                                  holds the lease; ended by its commit)
    t:{<table>}:sessions    hash  socket id → "node<TAB>user", every open connection
    t:{<table>}:departed    hash  socket id → why it ended (socket.io's reason), for a minute
    t:{<table>}:questions   hash  "<attack id>/<key>" → a question out now {payload, users, deadline}
    t:{<table>}:answers     hash  "<request_id>/<n>" → an answer to a question asked across processes
    t:{<table>}:changes     list  "<revision><TAB><token id>…" of the newest CHANGES_KEEP commits: the tokens
                                  each changed, so a process a few revisions behind re-reads only those
    t:{<table>}:bseq        int   the table's newest broadcast_seq
    t:{<table>}:log         stream the newest batches of broadcasts as published (about BROADCAST_KEEP)
    t:{<table>}:sent        hash  sender → "<batch id> <first seq>": each process's last batch, so one
                                  sent again after its reply was lost is not numbered twice (an hour)
    node:<node>             str   a live server process (expires unless renewed)

A store written before the hash tags (``t:<table>:...``) is renamed to this
layout the first time a process opens it.

A commit is one Lua script, which Redis runs atomically: it checks every
token's version, and only then writes the tokens, appends the audit entry,
records the request_id, bumps the table's revision and gives the attack
lease back — one round trip. A process re-reads a table's tokens only
when its revision moved, so it sees every other process's writes before it
checks anything against them. The attack lease (``SET NX PX``, renewed while
held, released only by its holder) makes a table's attacks run one at a
time whichever process received them; if a process dies holding it, it
expires after ``lease_ttl`` seconds. A release is published (to wake the
waiters) only when someone waits.

An attack's attacker and targets are locked in the store for as long as it
resolves (:meth:`RedisStore.lock_tokens`, one script that also reads the
revision the attack starts from; an attack's lease is taken by that same
script when it is free, and when it is handed over from another process the
holder's commit takes the waiter's locks for it, so an attack costs two
round trips, its locks and its commit, whichever process held the table): a commit of any other change to them,
through any process, is refused by the commit script itself, so an edit can
never slip in between an attack's read and its commit. The locks are tied to
the lease that took them — a process killed mid-attack frees them with its
lease — and the attack's commit ends them in the same script.

Commands go over a :class:`~.redis_link.Link`, one pipelined connection per
process, and lease releases arrive through its :class:`~.redis_link.Subscriber`
(which the server's message bus shares). Needs the ``redis`` extra
(``pip install vtt-bridge[redis]``).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import secrets
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlparse

from ..engine.tokens import Token
from ..errors import Conflict, InvalidRequest, NotFound, StoreUnavailable
from .redis_link import Link, RedisOptions, RedisUnavailable, Subscriber, parse_url
from .records import AuditDraft, AuditEntry, KeyInfo, TableInfo, dumps, token_from_dict
from .store import AUDIT_KEEP, BROADCAST_KEEP, HISTORY_SCAN, HistoryPage, Locks, Store, locked, stale

__all__ = ["AUDIT_KEEP", "Published", "RedisStore"]

log = logging.getLogger("vtt_bridge.state")



def _wait_of(url: str) -> tuple[int, int] | None:
    """``wait=N[&wait_ms=MS]`` in the URL's query: (replicas, milliseconds) for ``WAIT``."""
    query = parse_qs(urlparse(url).query)
    replicas = int(query.get("wait", ["0"])[0] or 0)
    if replicas <= 0:
        return None
    return replicas, int(query.get("wait_ms", ["500"])[0] or 500)

# Where a script that may hand the lease over gets _HAND_OVER (and the functions it uses), at open.
_WITH_HAND_OVER = "-- (hand_over)\n"

# The attack's token locks, checked first by every commit (prepended to _COMMIT, whose
# KEYS[6] is the lease and ARGV[5 + n * 3] the committing lease holder, or ""; the table's
# ``locked`` hash, see _LOCK, is among its KEYS, found by its name, so keys added to the
# commit after it or before it do not move it). The locks hold while the lease holder
# that took them still holds the table's lease, so a process that dies or gives the lease back
# leaves none behind. That holder's own commit ends them (the attack is over); any other
# commit that would change a locked token is refused: {'locked', token id, attack id}.
_LOCKS_GUARD = """
do
    local locks = false
    for i = #KEYS, 1, -1 do
        if string.sub(KEYS[i], -8) == '}:locked' then locks = KEYS[i] break end
    end
    local owner = locks and redis.call('HGET', locks, '')
    if owner then
        local n = tonumber(ARGV[1])
        if ARGV[5 + n * 3] == owner or redis.call('GET', KEYS[6]) ~= owner then
            redis.call('DEL', locks)
        else
            for i = 0, n - 1 do
                local attack = redis.call('HGET', locks, ARGV[2 + i * 3])
                if attack then return {'locked', ARGV[2 + i * 3], attack} end
            end
        end
    end
end
"""

# A table's batch of broadcasts, numbered, logged and published in one step, so the
# numbers, the log's order and the order of publishing agree across processes. A Lua
# function both scripts that broadcast start with: keys bseq and log; the channel, how
# many broadcasts, the sender's line, the batch, the log's length. The message is
# "<sender>\n<first seq>\n<batch>"; the log's entry id is the batch's last seq.
# TABLE_PUBLISH becomes 'SPUBLISH' under Cluster (a sharded channel), else 'PUBLISH' (RedisStore.open).
_NUMBERED = """
local function numbered(bseq, log, channel, n, sender, batch, keep)
    local last = redis.call('INCRBY', bseq, tonumber(n))
    local first = last - tonumber(n) + 1
    local message = sender .. '\\n' .. first .. '\\n' .. batch
    redis.call('XADD', log, 'MAXLEN', '~', keep, last .. '-0', 'm', message)
    redis.call(TABLE_PUBLISH, channel, message)
    return first
end
"""

# KEYS: tokens, audit, requests, refs, rev, lease, lease:want, trimmed, meta, keep, bseq, log, changes, locked,
# lease:next
# ARGV: n, (id, expected version or "", token JSON or "") * n, request_id or "", ref or "",
# entry JSON, the lease holder or "", the channel a release is published on, "1" when this
# process has the table's next attack waiting (else ""), the lease's time to live in ms,
# how many audit entries a table keeps unless its keep key says (0: all).
# Past that many, the oldest entries go, with their request_ids and refs.
# Then, optionally (see "the commit's broadcasts" below), the channel, how many broadcasts,
# the sender's line, the batch cut at its audit seq (before, after) and the log's length:
# the batch, with the entry's seq, is numbered, logged and published as _BROADCAST does.
# The lease then goes, in this order: to the first waiter if there is one (handed over: see
# _HAND_OVER); kept for this process's next attack (answered with 'kept'); else freed.
_COMMIT = _NUMBERED + _LOCKS_GUARD + _WITH_HAND_OVER + """
local n = tonumber(ARGV[1])
for i = 0, n - 1 do
    local id, expected = ARGV[2 + i * 3], ARGV[3 + i * 3]
    local current = redis.call('HGET', KEYS[1], id)
    local found = ''
    if current then found = tostring(cjson.decode(current)['version']) end
    if found ~= expected then return {'conflict', id, found} end
end
local request_id, ref = ARGV[2 + n * 3], ARGV[3 + n * 3]
if request_id ~= '' then
    local landed = redis.call('HGET', KEYS[3], request_id)
    if landed then
        -- written again (unchanged), so a WAIT after this script covers the first landing too
        redis.call('HSET', KEYS[3], request_id, landed)
        return {'duplicate', request_id, ''}
    end
end
for i = 0, n - 1 do
    local id, after = ARGV[2 + i * 3], ARGV[4 + i * 3]
    if after == '' then redis.call('HDEL', KEYS[1], id) else redis.call('HSET', KEYS[1], id, after) end
end
local len = redis.call('RPUSH', KEYS[2], ARGV[4 + n * 3])
local metas = redis.call('RPUSH', KEYS[9], request_id .. '\t' .. ref)
local trimmed = tonumber(redis.call('GET', KEYS[8]) or '0')
local seq = trimmed + len
local rev = redis.call('INCR', KEYS[5])
if request_id ~= '' then redis.call('HSET', KEYS[3], request_id, seq) end
if ref ~= '' then
    local seqs = redis.call('HGET', KEYS[4], ref)
    local list = seqs and cjson.decode(seqs) or {}
    table.insert(list, seq)
    redis.call('HSET', KEYS[4], ref, cjson.encode(list))
end
local keep = tonumber(redis.call('GET', KEYS[10]) or ARGV[9 + n * 3])
if keep > 0 and len > keep then
    local drop = len - keep
    -- entries written before the meta list existed have no meta: nothing to forget for them
    local unmatched = len - metas
    local forget = drop - unmatched
    if forget > 0 then
        for _, meta in ipairs(redis.call('LRANGE', KEYS[9], 0, forget - 1)) do
            local tab = string.find(meta, '\t', 1, true)
            local old_request, old_ref = string.sub(meta, 1, tab - 1), string.sub(meta, tab + 1)
            if old_request ~= '' then redis.call('HDEL', KEYS[3], old_request) end
            if old_ref ~= '' then
                local seqs = redis.call('HGET', KEYS[4], old_ref)
                if seqs then
                    local kept = {}
                    for _, s in ipairs(cjson.decode(seqs)) do
                        if s > trimmed + drop then table.insert(kept, s) end
                    end
                    if #kept == 0 then redis.call('HDEL', KEYS[4], old_ref)
                    else redis.call('HSET', KEYS[4], old_ref, cjson.encode(kept)) end
                end
            end
        end
        redis.call('LTRIM', KEYS[9], forget, -1)
    end
    redis.call('LTRIM', KEYS[2], drop, -1)
    redis.call('INCRBY', KEYS[8], drop)
end
-- which tokens this revision changed (t:{id}:changes, the newest CHANGES_KEEP), so another
-- process whose mirror is a few revisions behind re-reads only those (see _CHANGED)
local changed = {tostring(rev)}
for i = 0, n - 1 do table.insert(changed, ARGV[2 + i * 3]) end
redis.call('RPUSH', KEYS[13], table.concat(changed, '\t'))
redis.call('LTRIM', KEYS[13], -CHANGES_KEEP, -1)
-- (end of the changed tokens)
-- the commit's broadcasts (an attack's attack.resolved and token.updated), when given
local bfirst = ''
local bchannel = ARGV[10 + n * 3]
if bchannel and bchannel ~= '' then
    local batch = ARGV[13 + n * 3] .. seq .. ARGV[14 + n * 3]
    local count, sender, keep = ARGV[11 + n * 3], ARGV[12 + n * 3], ARGV[15 + n * 3]
    bfirst = tostring(numbered(KEYS[11], KEYS[12], bchannel, count, sender, batch, keep))
end
-- (end of the commit's broadcasts)
local holder, keep, ttl = ARGV[5 + n * 3], ARGV[7 + n * 3], ARGV[8 + n * 3]
if holder ~= '' and redis.call('GET', KEYS[6]) == holder then
    local want = redis.call('GET', KEYS[7])
    if want == holder then
        redis.call('DEL', KEYS[7])
        want = false
    end
    if want then
        hand_over(KEYS[6], KEYS[7], KEYS[15], KEYS[14], KEYS[3], KEYS[1], KEYS[13], want, rev, ARGV[6 + n * 3], ttl)
    elseif keep ~= '' then
        redis.call('PEXPIRE', KEYS[6], ttl)
        return {'ok', tostring(seq), tostring(rev), 'kept', bfirst}
    else
        redis.call('DEL', KEYS[6])
    end
end
return {'ok', tostring(seq), tostring(rev), '', bfirst}
"""

# How a lease is handed over: the holder's commit or release sets the lease to the first
# waiter's holder id (the ``want`` key) and publishes "<lease key>\n<its holder>\n<revision>"
# on the leases channel; the waiter then holds it without another round trip, starting from
# that revision (and the other waiters, woken, try again at once). A waiter that tried with its attack's token locks
# (_TAKE: they wait in ``lease:next``) has them taken for it by the same step, and the message
# carries what _LOCK would have answered it (JSON, a fourth line): its attack starts without a
# round trip of its own.
_HAND_OVER = """
local function hand_over(lease, wantkey, nextkey, locked, requests, tokens, changes, want, rev, channel, ttl)
    redis.call('SET', lease, want, 'PX', ttl)
    redis.call('DEL', wantkey)
    local message = lease .. '\\n' .. want .. '\\n' .. rev
    local spec = redis.call('GET', nextkey)
    if spec then
        redis.call('DEL', nextkey)
        spec = cjson.decode(spec)
        if spec[1] == want then
            local ids = {}
            for i = 5, #spec do ids[#ids + 1] = spec[i] end
            local found = lock(locked, requests, tokens, changes, tonumber(rev), want, spec[2], spec[3], spec[4], ids)
            message = message .. '\\n' .. cjson.encode(found)
        end
    end
    redis.call('PUBLISH', channel, message)
end
"""

# KEYS: lease, rev, lease:want; ARGV: holder, ttl ms, want ms. Takes a free lease and answers
# the table's revision in the same round trip; -1: someone else holds it, or it is promised
# to the first waiter (the ``want`` key, which that waiter renews on every try and which lapses
# if it gives up). The holder's release is then published, and the lease goes to that waiter
# rather than to whoever asks first — so a process with attacks queued cannot starve another.
# (A waiter's claim is dropped by the release script if it gives up.)
_ACQUIRE = """
local want = redis.call('GET', KEYS[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then
    -- handed over to this waiter while this try was on its way
    if want == ARGV[1] then redis.call('DEL', KEYS[3]) end
    return tonumber(redis.call('GET', KEYS[2]) or '0')
end
if (not want or want == ARGV[1]) and redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
    if want then redis.call('DEL', KEYS[3]) end
    return tonumber(redis.call('GET', KEYS[2]) or '0')
end
if not want or want == ARGV[1] then redis.call('SET', KEYS[3], ARGV[1], 'PX', ARGV[3]) end
return -1
"""

# KEYS: lease; ARGV: holder, ttl ms. Renews only the holder's lease.
_RENEW = """
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
return redis.call('PEXPIRE', KEYS[1], ARGV[2])
"""

# KEYS: lease, lease:want, rev, lease:next, locked, requests, tokens, changes; ARGV: holder,
# channel, ttl ms. Gives the holder's lease back (handed over to the first
# waiter, if any: _HAND_OVER) and drops a claim the holder made as a waiter.
_RELEASE = _WITH_HAND_OVER + """
if redis.call('GET', KEYS[2]) == ARGV[1] then redis.call('DEL', KEYS[2]) end  -- its own claim
if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
local want = redis.call('GET', KEYS[2])
if want then
    hand_over(KEYS[1], KEYS[2], KEYS[4], KEYS[5], KEYS[6], KEYS[7], KEYS[8], want,
              redis.call('GET', KEYS[3]) or '0', ARGV[2], ARGV[3])
else
    redis.call('DEL', KEYS[1])
end
return 1
"""

# KEYS: tables; ARGV: table id, its JSON as read, its new JSON. A settings change
# that lands only if nobody changed the table meanwhile (0: read again and retry).
# (The table's revision is bumped after it: under Cluster it lives in the table's slot.)
_SETTINGS = """
if redis.call('HGET', KEYS[1], ARGV[1]) ~= ARGV[2] then return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[3])
return 1
"""

# KEYS: audit, trimmed; ARGV: first seq, last seq (inclusive). Answers {trimmed, the list's
# length, the entries kept in that range...}: one consistent view while commits trim the list.
_SLICE = """
local trimmed = tonumber(redis.call('GET', KEYS[2]) or '0')
local len = redis.call('LLEN', KEYS[1])
local first, last = math.max(tonumber(ARGV[1]), trimmed + 1), math.min(tonumber(ARGV[2]), trimmed + len)
local out = {trimmed, len}
if first <= last then
    for _, entry in ipairs(redis.call('LRANGE', KEYS[1], first - trimmed - 1, last - trimmed - 1)) do
        table.insert(out, entry)
    end
end
return out
"""

# KEYS: audit, trimmed; ARGV: seqs. The entries of those seqs (false: no longer kept).
_PICK = """
local trimmed = tonumber(redis.call('GET', KEYS[2]) or '0')
local out = {}
for i, seq in ipairs(ARGV) do
    local at = tonumber(seq) - trimmed - 1
    if at < 0 then out[i] = false else out[i] = redis.call('LINDEX', KEYS[1], at) end
end
return out
"""

# KEYS: packs; ARGV: this process, its pack set (canonical JSON), how long its entry lives (ms).
# Joins when every live process runs the same pack set: answers {} (and notes this one), else
# {a process that differs, its pack set}. Entries past their time are dropped.
_ANNOUNCE = """
local now = redis.call('TIME')
local ms = tonumber(now[1]) * 1000 + math.floor(tonumber(now[2]) / 1000)
for _, node in ipairs(redis.call('HKEYS', KEYS[1])) do
    local entry = cjson.decode(redis.call('HGET', KEYS[1], node))
    if entry['until'] < ms then
        redis.call('HDEL', KEYS[1], node)
    elseif node ~= ARGV[1] and entry['packs'] ~= ARGV[2] then
        return {node, entry['packs']}
    end
end
redis.call('HSET', KEYS[1], ARGV[1], cjson.encode({packs = ARGV[2], ['until'] = ms + tonumber(ARGV[3])}))
return {}
"""

# KEYS: requests; ARGV: request_id. Its seq, written again unchanged (so that a WAIT after it
# covers the entry's own landing); false when the request_id is unknown.
_REQUEST = """
local seq = redis.call('HGET', KEYS[1], ARGV[1])
if seq then redis.call('HSET', KEYS[1], ARGV[1], seq) end
return seq
"""

# KEYS: tokens, changes, rev; ARGV: the revision a process's mirror of the table is at.
# Answers {the revision now} when it is that; {the revision now, the ids and rows (false:
# deleted) of every token changed since, in pairs} when the changes list holds every
# revision since; {the revision now, false}: it does not (a settings change, or too far
# behind): read the table whole.
_CHANGED_SINCE = """
local function changed_since(tokens, changes, rev, known)
    if rev == known then return {rev} end
    local behind = rev - known
    if behind < 0 or behind > CHANGES_KEEP then return {rev, false} end
    -- the newest ``behind`` entries, which must be those of revisions known + 1 .. rev
    local entries = redis.call('LRANGE', changes, -behind, -1)
    if #entries ~= behind then return {rev, false} end
    local ids, seen = {}, {}
    for i, entry in ipairs(entries) do
        local tab = string.find(entry, '\t', 1, true)
        if tonumber(string.sub(entry, 1, (tab or 0) - 1)) ~= known + i then return {rev, false} end
        if tab then
            for id in string.gmatch(string.sub(entry, tab + 1), '[^\t]+') do
                if not seen[id] then
                    seen[id] = true
                    table.insert(ids, id)
                end
            end
        end
    end
    local out = {rev}
    for _, id in ipairs(ids) do
        table.insert(out, id)
        table.insert(out, redis.call('HGET', tokens, id) or '')
    end
    return out
end
"""
_CHANGED = _CHANGED_SINCE + """
return changed_since(KEYS[1], KEYS[2], tonumber(redis.call('GET', KEYS[3]) or '0'), tonumber(ARGV[1]))
"""

# An attack's token locks, taken for its lease holder: the ``locked`` hash says who holds them
# (field "") and maps each token to the attack. Answers {the table's revision, the seq the
# request_id landed as or false}, read in the same step, followed — when the process says which
# revision it knows — by what _CHANGED answers for it (the lease often comes from another
# process, whose attacks moved the table on).
_LOCK_TOKENS = _CHANGED_SINCE + """
local function lock(locked, requests, tokens, changes, rev, holder, attack, asked, known, ids)
    redis.call('DEL', locked)
    local fields = {'', holder}
    for _, id in ipairs(ids) do
        fields[#fields + 1] = id
        fields[#fields + 1] = attack
    end
    redis.call('HSET', locked, unpack(fields))
    local landed = false
    if asked ~= '' then landed = redis.call('HGET', requests, asked) end
    local out = {rev, landed}
    if known ~= '' then
        for _, item in ipairs(changed_since(tokens, changes, rev, tonumber(known))) do out[#out + 1] = item end
    end
    return out
end
"""

# KEYS: locked, lease, rev, requests, tokens, changes; ARGV: holder, attack id, request_id or "",
# the revision the process knows or "", token ids... The locks of an attack whose process holds
# the lease already; {-1}: the lease is not the holder's.
_LOCK = _LOCK_TOKENS + """
if redis.call('GET', KEYS[2]) ~= ARGV[1] then return {-1} end
local ids = {}
for i = 5, #ARGV do ids[#ids + 1] = ARGV[i] end
return lock(KEYS[1], KEYS[4], KEYS[5], KEYS[6], tonumber(redis.call('GET', KEYS[3]) or '0'), ARGV[1], ARGV[2],
            ARGV[3], ARGV[4], ids)
"""

# KEYS: lease, rev, lease:want, lease:next, locked, requests, tokens, changes; ARGV: holder, ttl ms,
# want ms, attack id, request_id or "", the revision the process knows or "", token ids...
# _ACQUIRE and _LOCK in one step: a free lease is taken with the attack's token locks, answered
# as _LOCK answers. Else {-1}, and the first waiter's claim (``want``) comes with its locks'
# arguments (``lease:next``, JSON), so the holder's hand-over takes them for it (_HAND_OVER).
_TAKE = _LOCK_TOKENS + """
local want = redis.call('GET', KEYS[3])
local holder = ARGV[1]
if redis.call('GET', KEYS[1]) == holder then
    -- handed over to this waiter while this try was on its way (its locks taken again: the same)
    if want == holder then redis.call('DEL', KEYS[3]) end
elseif (not want or want == holder) and redis.call('SET', KEYS[1], holder, 'NX', 'PX', ARGV[2]) then
    if want then redis.call('DEL', KEYS[3]) end
else
    if not want or want == holder then
        redis.call('SET', KEYS[3], holder, 'PX', ARGV[3])
        local spec = {holder, ARGV[4], ARGV[5], ARGV[6]}
        for i = 7, #ARGV do spec[#spec + 1] = ARGV[i] end
        redis.call('SET', KEYS[4], cjson.encode(spec), 'PX', ARGV[3])
    end
    return {-1}
end
local ids = {}
for i = 7, #ARGV do ids[#ids + 1] = ARGV[i] end
return lock(KEYS[5], KEYS[6], KEYS[7], KEYS[8], tonumber(redis.call('GET', KEYS[2]) or '0'), holder, ARGV[4],
            ARGV[5], ARGV[6], ids)
"""

# The keys of a table each script is given, in order (RedisStore._keys).
_COMMIT_KEYS = (
    "tokens", "audit", "requests", "refs", "rev", "lease", "lease:want", "trimmed", "meta", "keep", "bseq", "log",
    "changes", "locked", "lease:next",
)
_LOCK_KEYS = ("locked", "lease", "rev", "requests", "tokens", "changes")
_TAKE_KEYS = ("lease", "rev", "lease:want", "lease:next", "locked", "requests", "tokens", "changes")
_RELEASE_KEYS = ("lease", "lease:want", "rev", "lease:next", "locked", "requests", "tokens", "changes")
# How many such lists a store keeps made (then it starts again).
_KEY_LISTS = 20_000

# Revisions whose changed tokens a table's changes list keeps.
CHANGES_KEEP = 64

# KEYS: sessions, departed; ARGV: socket id, why it ended, how long to keep that (ms).
_DEPART = """
redis.call('HDEL', KEYS[1], ARGV[1])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[2])
redis.call('PEXPIRE', KEYS[2], ARGV[3])
return 1
"""

# KEYS: bseq, log, sent; ARGV: channel, how many broadcasts, the sender's line, the batch,
# log length, the batch's id ("" for none). A batch sent again with the id of the sender's
# last batch (its reply was lost, e.g. the connection dropped after the script ran) is not
# numbered twice: the answer is the first seq it was given. ``sent`` (a hash, sender → "<id>
# <first seq>", kept an hour past its last write) remembers each sender's last batch.
_BROADCAST = _NUMBERED + """
local sender, id = ARGV[3], ARGV[6]
if id ~= '' then
    local seen = redis.call('HGET', KEYS[3], sender)
    if seen then
        local space = string.find(seen, ' ', 1, true)
        if string.sub(seen, 1, space - 1) == id then return tonumber(string.sub(seen, space + 1)) end
    end
end
local first = numbered(KEYS[1], KEYS[2], ARGV[1], ARGV[2], sender, ARGV[4], ARGV[5])
if id ~= '' then
    redis.call('HSET', KEYS[3], sender, id .. ' ' .. first)
    redis.call('PEXPIRE', KEYS[3], 3600000)
end
return first
"""


@dataclass
class Published:
    """Broadcasts a commit numbers, logs and publishes with itself (:meth:`RedisStore.commit`).

    The batch's JSON is cut where its audit entry's seq goes (``head`` + seq +
    ``tail``), which only the commit's script knows; the message is the one
    :meth:`RedisStore.broadcast` publishes.
    """

    channel: str
    sender: str
    n: int
    head: bytes
    tail: bytes
    first: int | None = None  # set once the commit landed: the batch's first broadcast_seq
    seq: int | None = None  # set once the commit landed: its audit entry's seq
    kept: Any = None  # whatever the publisher keeps beside it (the bus: the batch's packets)


class RedisStore(Store):
    """Tables, keys, tokens and the audit log in Redis.

    :param url: any URL :mod:`.redis_link` takes (one Redis, Sentinel, Cluster).
        Its query may also say ``wait=N`` (and ``wait_ms=MS``, default 500):
        a commit is acknowledged only once N replicas have it (``WAIT``).
    :param options: TLS files and timeouts (:class:`~.redis_link.RedisOptions`).
    :param prefix: prepended to every key, so several deployments (or tests)
        can share one Redis.
    :param lease_ttl: seconds a table's attack lease outlives a process that
        died holding it (renewed every third of that while held).
    :param audit_keep: audit entries a table keeps unless its ``audit_keep``
        setting says otherwise (0: all).
    :param broadcast_keep: batches of broadcasts a table's log keeps (Redis trims
        to about this many) for a process that lost its feed to catch up from.
    """

    kind = "redis"
    shared = True

    def __init__(
        self,
        url: str,
        *,
        options: RedisOptions | None = None,
        prefix: str = "vtt:",
        lease_ttl: float = 2.0,
        audit_keep: int = AUDIT_KEEP,
        broadcast_keep: int = BROADCAST_KEEP,
    ) -> None:
        self.url = url
        self.broadcast_keep = broadcast_keep
        self.options = options
        self.prefix = prefix
        self.lease_ttl = lease_ttl
        self.audit_keep = audit_keep
        try:
            parse_url(url)
            self.wait = _wait_of(url)
        except ValueError as exc:
            raise InvalidRequest(f"--redis: {exc}", details={"redis": str(exc)}) from None
        self.epoch: str | None = None
        self._link: Link | None = None
        self._announced: tuple[str, str] | None = None  # (process, its pack set), once announced
        self.subscriber: Subscriber | None = None
        self._waiting: dict[str, set[asyncio.Event]] = {}
        # The attack leases this process holds (key → holder), renewed by one task.
        self._held: dict[str, str] = {}
        # This process's waiters for a lease: holder → (the revision, the token locks taken with it
        # when the waiter tried with them, see _TAKE, or None), once handed over to it.
        self._claims: dict[str, tuple[int, list[Any] | None] | None] = {}
        # Leases a commit kept for the table's next attack here: key → (holder, revision, the keep).
        self._kept: dict[str, tuple[str, int, object]] = {}
        self._renewer: asyncio.Task[None] | None = None
        self._background: set[asyncio.Task[Any]] = set()
        # (table, token) → (its row as stored, its snapshot): an unchanged row is not
        # parsed again. The row, not the version, decides: a token deleted and
        # created again by another process starts at version 1 again.
        self._snapshots: dict[tuple[str, str], tuple[str, Token]] = {}
        self._revs: dict[str, int] = {}
        self._key_lists: dict[tuple[str, tuple[str, ...]], tuple[str, ...]] = {}

    @property
    def link(self) -> Link:
        if self._link is None:
            raise RuntimeError("the store is not open")
        return self._link

    async def open(self) -> None:
        if self._link is not None:
            return
        link = Link(self.url, self.options)
        # Under Cluster a table's broadcasts go to its shard only (SPUBLISH: the channel carries
        # the table's hash tag, so the script's node serves it); elsewhere, plain PUBLISH.
        # (The lease channel, which carries no hash tag, stays plain PUBLISH everywhere.)
        publish = "'SPUBLISH'" if link.cluster else "'PUBLISH'"

        def source(script: str) -> str:
            script = script.replace(_WITH_HAND_OVER, _LOCK_TOKENS + _HAND_OVER)  # (defined further down)
            return script.replace("CHANGES_KEEP", str(CHANGES_KEEP)).replace("TABLE_PUBLISH", publish)

        scripts = (
            _COMMIT, _ACQUIRE, _RENEW, _RELEASE, _SETTINGS, _DEPART, _SLICE, _PICK, _ANNOUNCE, _REQUEST,
            _BROADCAST, _CHANGED, _LOCK, _TAKE,
        )
        (self._commit, self._acquire, self._renew, self._release, self._settings, self._depart, self._slice,
         self._pick, self._announce, self._request, self._broadcast, self._changed, self._lock, self._take) = (
            link.script(source(script)) for script in scripts
        )
        await link.open()
        self._link = link
        try:
            await self._migrate()
            # The store's epoch: written once; a process that finds it gone later knows the
            # store was wiped under it (a restart without persistence).
            await link.call("SET", self.prefix + "epoch", secrets.token_hex(8), "NX")
            self.epoch = await link.call("GET", self.prefix + "epoch")
            self.subscriber = Subscriber(link)
            # Listening before any lease is tried, so no release is missed.
            async with asyncio.timeout(link.options.connect_timeout + link.options.command_timeout):
                await self.subscriber.subscribe(self._channel, self._released)
            link.arm()
            self.subscriber.outage.armed = True
        except (StoreUnavailable, TimeoutError) as exc:
            await self.close()
            if isinstance(exc, RedisUnavailable):
                raise
            why = getattr(exc, "why", "it stopped answering while the store opened")
            raise RedisUnavailable(
                f"cannot use Redis at {link.where.describe()}: {why}", details={"retry_after": 1.0}
            ) from None
        except BaseException:
            await self.close()
            raise

    async def close(self) -> None:
        if self._announced is not None and self._link is not None:
            with contextlib.suppress(Exception):
                await self._link.call("HDEL", self.prefix + "packs", self._announced[0])
            self._announced = None
        if self._renewer is not None:
            self._renewer.cancel()
            await asyncio.gather(self._renewer, return_exceptions=True)
            self._renewer = None
        if self.subscriber is not None:
            await self.subscriber.close()
            self.subscriber = None
        if self._link is not None:
            await self._link.close()
            self._link = None
        self._snapshots.clear()

    async def ping(self) -> None:
        """Raise :class:`StoreUnavailable` when Redis does not answer, or was wiped since this process opened it."""
        found = await self.link.call("GET", self.prefix + "epoch")
        if found != self.epoch:
            raise StoreUnavailable(
                "the Redis store was wiped since this process started (its epoch key is "
                + ("missing" if found is None else "another")
                + "): Redis restarted without persistence, or was flushed; restart the server processes "
                "and recreate or restore the tables",
                details={"epoch": self.epoch, "found": found},
            )

    async def _migrate(self) -> None:
        """Rename the keys of a store written before hash tags (``t:<table>:x`` → ``t:{<table>}:x``)."""
        link, marker = self.link, self.prefix + "layout"
        if link.cluster or await link.call("GET", marker) == "2":
            return
        cursor = "0"
        pattern = self.prefix.replace("*", "\\*").replace("?", "\\?") + "t:*"
        while True:
            cursor, keys = await link.call("SCAN", cursor, "MATCH", pattern, "COUNT", 500)
            for key in keys:
                rest = key[len(self.prefix) + 2:]
                if rest.startswith("{"):
                    continue
                table, sep, what = rest.partition(":")
                if sep:
                    await link.call("RENAMENX", key, f"{self.prefix}t:{{{table}}}:{what}")
            if str(cursor) == "0":
                break
        await link.call("SET", marker, "2")

    async def _hgetall(self, key: str) -> dict[str, str]:
        found = await self.link.call("HGETALL", key)  # redis-py answers a dict
        return dict(found)

    def _key(self, table_id: str, what: str) -> str:
        return f"{self.prefix}t:{{{table_id}}}:{what}"

    def _keys(self, table_id: str, whats: tuple[str, ...]) -> list[str]:
        """``[self._key(table_id, what) for what in whats]``, made once per table (an attack's
        scripts name some twenty keys)."""
        found = self._key_lists.get((table_id, whats))
        if found is None:
            if len(self._key_lists) >= _KEY_LISTS:
                self._key_lists.clear()
            found = self._key_lists[(table_id, whats)] = tuple(self._key(table_id, what) for what in whats)
        return list(found)

    def table_key(self, table_id: str, what: str) -> str:
        """The Redis key of one of a table's structures (``audit``, ``tokens`` … see the module docstring)."""
        return self._key(table_id, what)


    # -- broadcast sequence numbers -------------------------------------------

    async def broadcast(
        self, table_id: str, channel: str, message: bytes, n: int, *, sender: str = "", ident: str = ""
    ) -> int:
        """Number, log (``t:{id}:log``, a capped Stream) and publish a batch of ``n`` broadcasts, atomically.

        ``channel`` carries the table's hash tag (``…{<table>}``): under Cluster it
        is a sharded channel, published by ``SPUBLISH`` from the table's node.
        ``ident``: the batch's id among ``sender``'s; the same batch sent again
        with it (its reply was lost) answers the first seq it was given, and is
        neither numbered nor published twice.
        """
        keys = [self._key(table_id, "bseq"), self._key(table_id, "log"), self._key(table_id, "sent")]
        args = [channel, n, sender, message, self.broadcast_keep, ident if sender else ""]
        return int(await self.link.evalsha(self._broadcast, keys, args))

    async def broadcast_seq(self, table_id: str) -> int:
        return int(await self.link.call("GET", self._key(table_id, "bseq")) or 0)

    async def broadcasts_since(self, table_id: str, after: int, limit: int = 1000) -> list[tuple[int, str]] | None:
        entries = await self.link.call("XRANGE", self._key(table_id, "log"), f"({after}-0", "+", "COUNT", limit)
        out: list[tuple[int, str]] = []
        for entry in entries or ():
            fields = entry[1]
            if isinstance(fields, dict):
                message = fields.get("m")
            else:  # a flat [field, value, …] list
                message = dict(zip(fields[::2], fields[1::2], strict=False)).get("m")
            if message is None:
                continue
            out.append((int(message.split("\n", 2)[1]), message))
        if out:
            return None if out[0][0] > after + 1 else out
        return None if await self.broadcast_seq(table_id) > after else out

    # -- tables and keys ----------------------------------------------------

    async def create_table(self, table: TableInfo) -> None:
        created = await self.link.call("HSETNX", self.prefix + "tables", table.id, dumps(table.to_dict()))
        if not created:
            raise Conflict(f"table {table.id!r} exists", details={"table": table.id})
        await self._settings_changed(table.id, table.settings, bump=False)

    async def _settings_changed(self, table_id: str, settings: Mapping[str, Any], *, bump: bool = True) -> None:
        """What a table's settings decide in its own slot: its revision, its audit_keep."""
        if bump:
            await self.link.call("INCR", self._key(table_id, "rev"))
        if settings.get("audit_keep") is not None:
            await self.link.call("SET", self._key(table_id, "keep"), int(settings["audit_keep"]))

    async def get_table(self, table_id: str) -> TableInfo | None:
        raw = await self.link.call("HGET", self.prefix + "tables", table_id)
        return TableInfo.from_dict(json.loads(raw)) if raw else None

    async def list_tables(self) -> list[TableInfo]:
        raw = await self._hgetall(self.prefix + "tables")
        tables = [TableInfo.from_dict(json.loads(v)) for v in raw.values()]
        return sorted(tables, key=lambda t: (t.created, t.id))

    async def update_settings(self, table_id: str, settings: Mapping[str, Any]) -> TableInfo:
        # Settings change rarely and only by the GM; a compare-and-set loop keeps
        # two simultaneous changes from losing one another.
        key = self.prefix + "tables"
        while True:
            raw = await self.link.call("HGET", key, table_id)
            if not raw:
                raise NotFound(f"no table {table_id!r}", details={"table": table_id})
            table = TableInfo.from_dict(json.loads(raw))
            updated = TableInfo(
                id=table.id, name=table.name, created=table.created, settings={**table.settings, **settings}
            )
            if await self.link.evalsha(self._settings, [key], [table_id, raw, dumps(updated.to_dict())]):
                await self._settings_changed(table_id, settings)
                return updated

    async def set_key(self, table_id: str, key: KeyInfo) -> None:
        await self.link.call(
            "HSET", self._key(table_id, "keys"), key.user, dumps({"digest": key.digest, "created": key.created})
        )

    async def delete_key(self, table_id: str, user: str) -> bool:
        return bool(await self.link.call("HDEL", self._key(table_id, "keys"), user))

    async def keys(self, table_id: str) -> list[KeyInfo]:
        raw = await self._hgetall(self._key(table_id, "keys"))
        out = []
        for user, value in raw.items():
            data = json.loads(value)
            out.append(KeyInfo(user=user, digest=data["digest"], created=data["created"]))
        return out

    # -- tokens and the audit log -------------------------------------------

    async def tokens(self, table_id: str) -> dict[str, Token]:
        raw = await self._hgetall(self._key(table_id, "tokens"))
        out = {}
        snapshots = self._snapshots
        for token_id in sorted(raw):
            row = raw[token_id]
            cached = snapshots.get((table_id, token_id))
            if cached is None or cached[0] != row:
                cached = snapshots[(table_id, token_id)] = (row, token_from_dict(json.loads(row)))
            out[token_id] = cached[1]
        return out

    async def commit(
        self, table_id: str, draft: AuditDraft, *, lease: _Lease | None = None, publish: Published | None = None
    ) -> AuditEntry:
        """See :meth:`Store.commit`; ``publish``: broadcasts numbered, logged and published by the
        same script once the commit lands (its ``first`` is then set), with the entry's seq in them."""
        changes = {token_id: change.wire() for token_id, change in draft.changes.items()}
        entry = {
            "kind": draft.kind,
            "user": draft.user,
            "at": draft.at,
            "ref": draft.ref,
            "request_id": draft.request_id,
            "changes": changes,
            "data": dict(draft.data),
        }
        args: list[Any] = [len(changes)]
        rows = {}
        for token_id, change in draft.changes.items():
            args.append(token_id)
            args.append(str(change.before.version) if change.before is not None else "")
            rows[token_id] = dumps(changes[token_id]["after"]) if change.after is not None else ""
            args.append(rows[token_id])
        args += [draft.request_id or "", draft.ref or "", dumps(entry)]
        # A successful commit gives the table's attack lease back in the same round trip.
        args += [lease.holder if lease is not None else "", self._channel]
        # (locked: the attack's token locks, see _LOCKS_GUARD; lease:next: a waiter's locks, taken
        # if the lease goes to it)
        keys = self._keys(table_id, _COMMIT_KEYS)
        keep = lease is not None and lease.queued is not None and lease.queued()
        args += ["1" if keep else "", max(1, int(self.lease_ttl * 1000)), self.audit_keep]
        if publish is not None:
            args += [publish.channel, publish.n, publish.sender, publish.head, publish.tail, self.broadcast_keep]
        status, first, second, *kept = await self.link.evalsha(self._commit, keys, args, wait=self.wait)
        if status == "conflict":
            expected = draft.changes[first].before
            raise stale(first, expected.version if expected is not None else None, int(second) if second else None)
        if status == "locked":
            raise locked(first, second)
        if status == "duplicate":
            raise Conflict(
                f"request_id {draft.request_id!r} was already used on this table",
                details={"request_id": draft.request_id},
            )
        self._revs[table_id] = int(second)
        if publish is not None and len(kept) > 1 and kept[1]:
            publish.first, publish.seq = int(kept[1]), int(first)
        if lease is not None:
            if kept and kept[0]:
                # Handed to this process's next attack on the table, which starts from this revision.
                lease.kept = int(second)
            else:
                lease.released = True
        for token_id, change in draft.changes.items():
            if change.after is None:
                self._snapshots.pop((table_id, token_id), None)
            else:
                self._snapshots[(table_id, token_id)] = (rows[token_id], change.after)
        return AuditEntry(seq=int(first), table=table_id, **entry)

    async def _entries(self, table_id: str, seqs: list[int]) -> list[AuditEntry]:
        if not seqs:
            return []
        keys = [self._key(table_id, "audit"), self._key(table_id, "trimmed")]
        raws = await self.link.evalsha(self._pick, keys, seqs)
        pairs = zip(seqs, raws, strict=True)
        return [AuditEntry(seq=seq, table=table_id, **json.loads(raw)) for seq, raw in pairs if raw]

    async def by_request(self, table_id: str, request_id: str) -> AuditEntry | None:
        key = self._key(table_id, "requests")
        if self.wait is None:
            seq = await self.link.call("HGET", key, request_id)
        else:
            # A request sent again after a failover: answered only once replicas have its entry.
            seq = await self.link.evalsha(self._request, [key], [request_id], wait=self.wait)
        found = await self._entries(table_id, [int(seq)]) if seq else []
        return found[0] if found else None

    async def by_ref(self, table_id: str, ref: str) -> list[AuditEntry]:
        raw = await self.link.call("HGET", self._key(table_id, "refs"), ref)
        return await self._entries(table_id, json.loads(raw)) if raw else []

    async def history(
        self, table_id: str, *, limit: int, before: int | None = None, kinds: tuple[str, ...] = ("attack", "undo")
    ) -> HistoryPage:
        # Walk the list backwards in pages, from the end of the log at most (a huge
        # ``before`` counts from there) and over HISTORY_SCAN entries at most.
        trimmed, length = await self._bounds(table_id)
        last = trimmed + length
        end = last if before is None else min(before - 1, last)
        floor = max(trimmed + 1, end - HISTORY_SCAN + 1)
        out: list[AuditEntry] = []
        page = 200
        while end >= floor and len(out) < limit:
            start = max(floor, end - page + 1)
            now_trimmed, _length, raws = await self._range(table_id, start, end)
            if now_trimmed >= start:  # trimmed meanwhile: what is left of the page
                start = now_trimmed + 1
                floor = max(floor, start)
            for offset in range(len(raws) - 1, -1, -1):
                data = json.loads(raws[offset])
                if data["kind"] in kinds:
                    out.append(AuditEntry(seq=start + offset, table=table_id, **data))
                    if len(out) >= limit:
                        break
            end = start - 1
        if len(out) == limit:
            nxt: int | None = out[-1].seq
        else:
            nxt = floor if end >= 1 and floor > trimmed + 1 else None
        return HistoryPage(out, nxt if nxt is not None and nxt > trimmed + 1 else None)

    async def _range(self, table_id: str, first: int, last: int) -> tuple[int, int, list[str]]:
        """(trimmed, the list's length, the raw entries of seqs first..last still kept)."""
        keys = [self._key(table_id, "audit"), self._key(table_id, "trimmed")]
        trimmed, length, *raws = await self.link.evalsha(self._slice, keys, [first, last])
        return int(trimmed), int(length), raws

    async def _bounds(self, table_id: str) -> tuple[int, int]:
        trimmed, length, _raws = await self._range(table_id, 1, 0)
        return trimmed, length

    async def since(
        self, table_id: str, after: int, *, limit: int, kinds: tuple[str, ...] = ("attack", "undo")
    ) -> list[AuditEntry]:
        # Entry n is at list index n - 1: walk forwards from ``after`` in pages.
        out: list[AuditEntry] = []
        start, page = after, 200
        while len(out) < limit:
            trimmed, length, raws = await self._range(table_id, start + 1, start + page)
            if trimmed > start:  # entries no longer kept: from the oldest kept one
                start = trimmed
            for offset, raw in enumerate(raws):
                data = json.loads(raw)
                if data["kind"] in kinds:
                    out.append(AuditEntry(seq=start + offset + 1, table=table_id, **data))
                    if len(out) >= limit:
                        break
            if not raws or start + len(raws) >= trimmed + length:
                break
            start += len(raws)
        return out

    async def last_seq(self, table_id: str) -> int:
        trimmed, length = await self._bounds(table_id)
        return trimmed + length

    async def audit_trimmed(self, table_id: str) -> int:
        return (await self._bounds(table_id))[0]

    async def audit(self, table_id: str) -> list[AuditEntry]:
        """The entries still kept, oldest first (the first one's seq is above 1 once trimmed)."""
        trimmed, _length, raws = await self._range(table_id, 1, 1 << 62)
        return [AuditEntry(seq=trimmed + i + 1, table=table_id, **json.loads(raw)) for i, raw in enumerate(raws)]

    # -- several server processes ------------------------------------------------

    async def revision(self, table_id: str) -> int | None:
        return int(await self.link.call("GET", self._key(table_id, "rev")) or 0)

    def committed_revision(self, table_id: str) -> int | None:
        return self._revs.get(table_id)

    async def changed_since(self, table_id: str, rev: int) -> tuple[int, dict[str, Token | None]] | None:
        keys = [self._key(table_id, "tokens"), self._key(table_id, "changes"), self._key(table_id, "rev")]
        return self._changed_rows(table_id, await self.link.evalsha(self._changed, keys, [rev]))

    def _changed_rows(self, table_id: str, reply: list[Any]) -> tuple[int, dict[str, Token | None]] | None:
        """_CHANGED's answer as :meth:`changed_since` returns it."""
        now, *found = reply
        if found and found[0] is None:
            return None
        out: dict[str, Token | None] = {}
        snapshots = self._snapshots
        for token_id, row in zip(found[::2], found[1::2], strict=True):
            if not row:
                snapshots.pop((table_id, token_id), None)
                out[token_id] = None
                continue
            cached = snapshots.get((table_id, token_id))
            if cached is None or cached[0] != row:
                cached = snapshots[(table_id, token_id)] = (row, token_from_dict(json.loads(row)))
            out[token_id] = cached[1]
        return int(now), out

    def lease(
        self, table_id: str, *, queued: Callable[[], bool] | None = None, with_locks: bool = False
    ) -> _Lease:
        """The table's attack lease; ``queued()`` says whether this process has another attack
        waiting for it (then a commit keeps the lease for that one, unless another process waits).
        ``with_locks``: the holder's first step is :meth:`lock_tokens`, which then takes the lease
        with the locks in one round trip (entering waits for nothing: see :class:`_Lease`)."""
        return _Lease(self, table_id, queued, with_locks=with_locks)

    async def lock_tokens(
        self,
        table_id: str,
        lease: Any,
        attack: str,
        token_ids: list[str],
        *,
        request_id: str | None = None,
        known: int | None = None,
    ) -> Locks:
        """Lock ``token_ids`` for ``attack`` in the store (``t:{table}:locked``), one round trip
        that also reads the table's revision (and, unless commits wait for replicas, whether
        ``request_id`` landed; and with ``known``, the tokens changed since that revision, as
        :meth:`changed_since`). Every commit checks them in its script (``_LOCKS_GUARD``); the
        attack's own commit ends them; they lapse with the lease that took them."""
        keys = self._keys(table_id, _LOCK_KEYS)
        asked = request_id if request_id is not None and self.wait is None else ""
        since = "" if known is None else known
        if getattr(lease, "pending", False):
            # Not held yet (lease(..., with_locks=True)): taken now, with the locks.
            rev, *rest = await lease.take(attack, asked, since, token_ids)
        else:
            rev, *rest = await self.link.evalsha(self._lock, keys, [lease.holder, attack, asked, since, *token_ids])
        landed = rest[:1]
        if int(rev) < 0:
            raise StoreUnavailable(
                "this process lost the table's attack lease (it stalled, or Redis lost the lease); "
                "nothing was applied: send the attack again",
                details={"retry_after": 1.0},
            )
        entry = None
        if landed and landed[0]:
            found = await self._entries(table_id, [int(landed[0])])
            entry = found[0] if found else None
        elif request_id is not None and self.wait is not None:
            entry = await self.by_request(table_id, request_id)  # answered once replicas have it
        changed = self._changed_rows(table_id, rest[1:]) if known is not None else None
        return Locks(int(rev), entry, changed, known)

    async def join(self, table_id: str, sid: str, user: str, node: str) -> None:
        await self.link.call("HSET", self._key(table_id, "sessions"), sid, f"{node}\t{user}")

    async def leave(self, table_id: str, sid: str) -> None:
        await self.link.call("HDEL", self._key(table_id, "sessions"), sid)

    async def sessions(self, table_id: str) -> dict[str, str] | None:
        key = self._key(table_id, "sessions")
        raw = await self._hgetall(key)
        if not raw:
            return {}
        entries = {sid: value.split("\t", 1) for sid, value in raw.items()}
        nodes = sorted({node for node, _user in entries.values()})
        # One GET a process (not MGET: under Cluster their keys live in different slots).
        found = await asyncio.gather(*(self.link.call("GET", f"{self.prefix}node:{n}") for n in nodes))
        alive = dict(zip(nodes, found, strict=True))
        gone = [sid for sid, (node, _user) in entries.items() if not alive[node]]
        if gone:
            # Connections of a process that died without saying goodbye.
            await self.link.call("HDEL", key, *gone)
        return {sid: user for sid, (node, user) in entries.items() if alive[node]}

    async def heartbeat(self, node: str, ttl: float) -> None:
        try:
            await self.link.call("SET", f"{self.prefix}node:{node}", "1", "PX", max(1, int(ttl * 1000)))
            if self._announced is not None and self._announced[0] == node:
                await self._announce_as(node, self._announced[1], ttl)
        except StoreUnavailable:
            pass  # the link logged the outage once; the next beat tries again
        except Conflict as exc:
            log.error(str(exc))  # joined meanwhile by a process of another pack set (after an outage)

    async def announce(self, node: str, packs: Mapping[str, str | None], ttl: float = 6.0) -> None:
        """Join the deployment as ``node`` running ``packs`` (name → version).

        :raises Conflict: a live process runs another pack set; says what differs.
        """
        canonical = json.dumps(dict(sorted(packs.items())), separators=(",", ":"))
        await self._announce_as(node, canonical, ttl)
        self._announced = (node, canonical)

    async def _announce_as(self, node: str, canonical: str, ttl: float) -> None:
        found = await self.link.evalsha(
            self._announce, [self.prefix + "packs"], [node, canonical, max(1000, int(ttl * 1000) * 2)]
        )
        if found:
            other, theirs = found[0], json.loads(found[1])
            raise Conflict(
                f"this process's packs differ from those of the running server process {other}: "
                f"{_pack_difference(json.loads(canonical), theirs)}. Every process of a deployment runs the same "
                "packs: install the same ones (vtt-bridge plugins), or stop the others first",
                details={"process": other, "theirs": theirs},
            )

    @property
    def _channel(self) -> str:
        return f"{self.prefix}leases"

    def _released(self, message: str) -> None:
        key, *handed = message.split("\n", 3)
        if len(handed) >= 2 and handed[0] in self._claims:
            # Handed to a waiter of this process (with its token locks, when it tried with them).
            found = [None if item is False else item for item in json.loads(handed[2])] if len(handed) > 2 else None
            self._claims[handed[0]] = (int(handed[1]), found)
        for event in self._waiting.get(key, ()):
            event.set()

    def _await_release(self, key: str) -> asyncio.Event:
        """An event set when the lease ``key`` is released (by any process)."""
        event = asyncio.Event()
        self._waiting.setdefault(key, set()).add(event)
        return event

    def _later(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._background.add(task)
        task.add_done_callback(self._background_done)

    def _background_done(self, task: asyncio.Task[Any]) -> None:
        self._background.discard(task)
        if task.cancelled():
            return
        error = task.exception()  # retrieved, so asyncio does not log it again at collection
        if error is not None and not isinstance(error, StoreUnavailable):  # an outage is logged once
            log.warning("a background Redis command failed", extra={"error": str(error)})

    def _hold(self, key: str, holder: str) -> None:
        self._held[key] = holder
        if self._renewer is None:
            self._renewer = asyncio.get_running_loop().create_task(self._renew_held(), name="lease renewals")

    async def _renew_held(self) -> None:
        """Renew every lease this process holds, every third of their time to live."""
        ttl_ms = max(1, int(self.lease_ttl * 1000))
        while True:
            await asyncio.sleep(ttl_ms / 3000)
            held = list(self._held.items())
            renewals = (self.link.evalsha(self._renew, [key], [holder, ttl_ms]) for key, holder in held)
            for (key, _holder), outcome in zip(held, await asyncio.gather(*renewals, return_exceptions=True)):
                if isinstance(outcome, Exception) and not isinstance(outcome, StoreUnavailable):
                    log.warning("could not renew an attack lease", extra={"lease": key, "error": str(outcome)})

    def _forget(self, key: str, event: asyncio.Event) -> None:
        waiting = self._waiting.get(key)
        if waiting is not None:
            waiting.discard(event)
            if not waiting:
                del self._waiting[key]

    # -- why a connection ended (asked by the process that put a question to it) ----

    async def depart(self, table_id: str, sid: str, reason: str | None) -> None:
        departed = self._key(table_id, "departed")
        await self.link.evalsha(self._depart, [self._key(table_id, "sessions"), departed], [sid, reason or "", _DEPARTED_MS])

    async def departed(self, table_id: str, sids: list[str]) -> dict[str, str]:
        if not sids:
            return {}
        reasons = await self.link.call("HMGET", self._key(table_id, "departed"), *sids)
        return {sid: reason for sid, reason in zip(sids, reasons, strict=True) if reason is not None}

    # -- the questions out at a table, whichever process asks them ----------------

    def question_out(self, table_id: str, ref: str, entry: Mapping[str, Any], seconds: float) -> None:
        """Note a question out now (``entry``: JSON-able, with ``deadline`` in wall-clock seconds).

        Sent without waiting, behind this process's earlier commands (the
        ``decision.asked`` broadcast goes out after it). The table's hash of
        questions lives as long as its newest question could: a process that
        dies leaves nothing behind for longer.
        """
        key = self._key(table_id, "questions")
        self.link.send("HSET", key, ref, dumps(entry))
        self.link.send("PEXPIRE", key, max(1, int(seconds * 1000)) + _QUESTION_SLACK_MS, "GT")
        self.link.send("PEXPIRE", key, max(1, int(seconds * 1000)) + _QUESTION_SLACK_MS, "NX")

    def question_settled(self, table_id: str, ref: str) -> None:
        self.link.send("HDEL", self._key(table_id, "questions"), ref)

    async def questions(self, table_id: str) -> dict[str, dict[str, Any]]:
        """The questions out at the table on any process, by ref, as :meth:`question_out` noted them."""
        raw = await self._hgetall(self._key(table_id, "questions"))
        return {ref: json.loads(value) for ref, value in raw.items()}


    # -- answers to questions asked across processes, kept for whoever asks again ----

    def answer_kept(self, table_id: str, ref: str, entry: Mapping[str, Any], seconds: float) -> None:
        """Keep an answer (``entry``: JSON-able) to the question ``ref`` for ``seconds``.

        Sent without waiting, behind this process's earlier commands (so before
        the message that carries the answer to the asking process). The table's
        hash of answers lives as long as its newest answer.
        """
        key = self._key(table_id, "answers")
        self.link.send("HSET", key, ref, dumps(entry))
        self.link.send("PEXPIRE", key, max(1, int(seconds * 1000)), "GT")
        self.link.send("PEXPIRE", key, max(1, int(seconds * 1000)), "NX")

    async def answer(self, table_id: str, ref: str) -> dict[str, Any] | None:
        """The answer kept for ``ref``, if any (left in place)."""
        raw = await self.link.call("HGET", self._key(table_id, "answers"), ref)
        return json.loads(raw) if raw is not None else None

    async def answer_taken(self, table_id: str, ref: str) -> dict[str, Any] | None:
        """Take the answer kept for ``ref``: it, if this call removed it (``None`` if none, or
        another process took it first)."""
        key = self._key(table_id, "answers")
        raw, removed = await asyncio.gather(self.link.call("HGET", key, ref), self.link.call("HDEL", key, ref))
        return json.loads(raw) if raw is not None and removed else None


def _pack_difference(ours: Mapping[str, Any], theirs: Mapping[str, Any]) -> str:
    said = []
    for name in sorted(set(ours) | set(theirs)):
        if name not in theirs:
            said.append(f"{name} only here")
        elif name not in ours:
            said.append(f"{name} only there")
        elif ours[name] != theirs[name]:
            said.append(f"{name} {ours[name]} here, {theirs[name]} there")
    return "; ".join(said) or "they differ"


# How long the reason a connection ended is kept (milliseconds), for questions put to it.
_DEPARTED_MS = 60_000
# How long past its newest question's deadline a table's hash of questions is kept (milliseconds).
_QUESTION_SLACK_MS = 5_000


class _Lease:
    """``async with store.lease(table) as lease``: wait for the table's attack lease, hold it, give it back.

    ``lease.revision`` is the table's revision read when it was taken. While
    held, the store renews it (one task for all the leases a process holds).
    The first waiter claims the lease (``lease:want``); the holder's commit
    or release hands it straight over and publishes so, with the revision the
    waiter starts from — no second try, and a process with more attacks queued
    cannot take it back first. Other waiters retry when woken and every
    ``_RETRY`` seconds, which is also how a lease left by a process that died
    is taken over once it expires.

    A commit made while this process has the table's next attack waiting
    (``queued``) keeps the lease for it, unless another process waits for the
    lease: that attack then starts without a round trip, from the revision
    the commit left — exact, since it was sent after the commit. A kept lease
    nobody picks up within ``_UNCLAIMED`` seconds is given back.

    Entered ``with_locks`` (an attack's), a lease not kept for it is only
    *pending*: :meth:`RedisStore.lock_tokens` takes it (:meth:`take`), in one
    script with the attack's token locks, and a waiter's claim carries its
    locks' arguments, so the holder's hand-over takes them for it.
    """

    _RETRY = 0.1
    _UNCLAIMED = 0.05
    _WANT_MS = 500  # a waiter's claim lapses this long after its last try

    def __init__(
        self, store: RedisStore, table_id: str, queued: Callable[[], bool] | None, *, with_locks: bool = False
    ) -> None:
        self.store = store
        self.table_id = table_id
        self.key = store._key(table_id, "lease")
        self.rev_key = store._key(table_id, "rev")
        self.queued = queued
        self.with_locks = with_locks
        self.holder = secrets.token_hex(12)
        self.revision: int | None = None
        self.released = False
        self.kept: int | None = None
        # Entered with_locks and not taken yet: lock_tokens takes it (take).
        self.pending = False

    async def __aenter__(self) -> _Lease:
        store = self.store
        handed = store._kept.pop(self.key, None)
        if handed is not None:
            self.holder, self.revision, _keep = handed
            return self
        if self.with_locks:
            self.pending = True
            return self
        ttl_ms = max(1, int(store.lease_ttl * 1000))
        keys = [self.key, self.rev_key, self.key + ":want"]
        args = [self.holder, ttl_ms, self._WANT_MS]
        rev, _locks = await self._wait(lambda: store.link.evalsha(store._acquire, keys, args), lambda rev: rev)
        self.revision = rev
        return self

    async def take(self, attack: str, asked: str, known: Any, token_ids: list[str]) -> list[Any]:
        """Take the lease entered ``with_locks`` and the attack's token locks: :meth:`RedisStore.lock_tokens`'s
        reply (_LOCK's), from one round trip when the lease is free, none when it is handed over
        (the holder's step takes the locks, see _HAND_OVER), two when a hand-over came without them."""
        store = self.store
        ttl_ms = max(1, int(store.lease_ttl * 1000))
        keys = store._keys(self.table_id, _TAKE_KEYS)
        args = [self.holder, ttl_ms, self._WANT_MS, attack, asked, known, *token_ids]
        rev, locks = await self._wait(lambda: store.link.evalsha(store._take, keys, args), lambda reply: int(reply[0]))
        self.pending = False
        if locks is None and isinstance(rev, int):  # handed over without the locks: taken now
            keys = store._keys(self.table_id, _LOCK_KEYS)
            locks = await store.link.evalsha(store._lock, keys, [self.holder, attack, asked, known, *token_ids])
        elif locks is None:
            locks = rev  # taken by the try itself: its reply
        self.revision = int(locks[0])
        return locks

    async def _wait(self, attempt: Callable[[], Any], revision: Callable[[Any], int]) -> tuple[Any, Any]:
        """Try ``attempt()`` until the lease is this holder's: (its reply, None) when a try took it
        (``revision(reply)`` ≥ 0), else (the revision, the locks or None) it was handed over with."""
        store = self.store
        claims = store._claims
        claims[self.holder] = None
        try:
            while True:
                # Listen before trying, so a release in between is not missed.
                released = store._await_release(self.key)
                try:
                    reply = await attempt()
                    if revision(reply) < 0 and claims[self.holder] is None:
                        with contextlib.suppress(TimeoutError):
                            async with asyncio.timeout(self._RETRY):
                                await released.wait()
                finally:
                    store._forget(self.key, released)
                if revision(reply) >= 0:  # taken
                    outcome: tuple[Any, Any] = (reply, None)
                    break
                handed = claims[self.holder]
                if handed is not None:  # handed over
                    outcome = handed
                    break
        except BaseException:
            # Given up (cancelled): drop the claim, and the lease if it was handed over meanwhile.
            store._later(self._give_back())
            raise
        finally:
            del claims[self.holder]
        store._hold(self.key, self.holder)  # renewed while held
        return outcome

    async def __aexit__(self, *exc: object) -> None:
        store = self.store
        if self.kept is not None:
            keep = object()
            store._kept[self.key] = (self.holder, self.kept, keep)
            asyncio.get_running_loop().call_later(self._UNCLAIMED, self._unclaimed, keep)
            return
        if self.pending:  # entered with_locks, never taken
            return
        if store._held.get(self.key) == self.holder:
            del store._held[self.key]
        if self.released:  # given back by the commit
            return
        with contextlib.suppress(Exception):
            await self._give_back()

    def _unclaimed(self, keep: object) -> None:
        store = self.store
        if store._kept.get(self.key, (None, None, None))[2] is not keep:
            return  # taken by the next attack (which gives it back itself)
        del store._kept[self.key]
        if store._held.get(self.key) == self.holder:
            del store._held[self.key]
        store._later(self._give_back())

    async def _give_back(self) -> None:
        store = self.store
        ttl_ms = max(1, int(store.lease_ttl * 1000))
        keys = store._keys(self.table_id, _RELEASE_KEYS)
        await store.link.evalsha(store._release, keys, [self.holder, store._channel, ttl_ms])
