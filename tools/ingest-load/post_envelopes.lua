-- wrk script: POSTs the shared generator's gzip'd native crash envelopes (pool written by
-- make_envelopes.py) with a fresh event id per request, and writes a JSON summary at the end.
--   wrk -t2 -c16 -d30s -s post_envelopes.lua URL   with env INGEST_POOL, INGEST_KEY, INGEST_OUT
local bit = require("bit")
local pool_file = os.getenv("INGEST_POOL")
local key = os.getenv("INGEST_KEY")
local out_file = os.getenv("INGEST_OUT")
local pool = dofile(pool_file)

local threads = {}
local counter = 0

function setup(thread)
  thread:set("tid", #threads + 1)
  table.insert(threads, thread)
end

local prefix, n, hex = "", 0, {}
for i = 0, 15 do hex[string.sub("0123456789abcdef", i + 1, i + 1)] = i end

function init(args)
  math.randomseed(os.time() * 1000 + tid * 7919 + math.floor(os.clock() * 1e6))
  -- 12 random hex digits per thread + 8 per-process (the clock) + a 12-digit counter: unique ids.
  prefix = string.format("%06x%06x%08x", math.random(0, 0xffffff), math.random(0, 0xffffff), os.time() % 0x100000000)
  wrk.method = "POST"
  wrk.headers["Content-Type"] = "application/x-sentry-envelope"
  wrk.headers["Content-Encoding"] = "gzip"
  wrk.headers["X-Sentry-Auth"] = "Sentry sentry_version=7, sentry_key=" .. key .. ", sentry_client=bench-wrk/1.0"
  wrk.headers["User-Agent"] = "bench-wrk/1.0"
end

local function le32(x)
  return string.char(bit.band(x, 255), bit.band(bit.rshift(x, 8), 255), bit.band(bit.rshift(x, 16), 255), bit.band(bit.rshift(x, 24), 255))
end

function request()
  n = n + 1
  local e = pool[(n % #pool) + 1]
  local id = prefix .. string.format("%012x", n)
  local crc, d = e.crc, e.deltas
  for k = 1, 32 do
    local v = hex[string.sub(id, k, k)]
    crc = bit.bxor(crc, d[(k - 1) * 16 + v + 1], d[(k + 31) * 16 + v + 1])
  end
  local body = e.parts[1] .. id .. e.parts[2] .. id .. e.parts[3] .. le32(crc) .. le32(e.isize)
  return wrk.format(nil, nil, nil, body)
end

function done(summary, latency, requests)
  local f = io.open(out_file, "w")
  f:write(string.format(
    '{"requests": %d, "duration_us": %d, "bytes": %d, "non_2xx": %d, "connect_errors": %d, "read_errors": %d, ' ..
    '"write_errors": %d, "timeouts": %d, "latency_ms": {"p50": %.3f, "p90": %.3f, "p99": %.3f, "max": %.3f, "mean": %.3f}}\n',
    summary.requests, summary.duration, summary.bytes, summary.errors.status, summary.errors.connect, summary.errors.read,
    summary.errors.write, summary.errors.timeout, latency:percentile(50) / 1000, latency:percentile(90) / 1000,
    latency:percentile(99) / 1000, latency.max / 1000, latency.mean / 1000))
  f:close()
end
