-- wrk script for bench/sparql_load.py: GET <prefix><key><suffix>, or <prefix><suffix> when keys is 0
-- (prefix: the path and "?query=" with the query up to the key, URL-encoded).
-- Arguments after "--": prefix, suffix, keys, authorization header value ("" for none).
-- The key is random in [0, keys), seeded per thread so a run is repeatable; done() prints one JSON line.

local threads = {}
local counter = 0

function setup(thread)
  counter = counter + 1
  thread:set("seed", counter)
  table.insert(threads, thread)
end

function init(args)
  prefix, suffix, keys = args[1], args[2], tonumber(args[3])
  wrk.headers["Accept"] = "application/sparql-results+json"
  if args[4] ~= nil and args[4] ~= "" then
    wrk.headers["Authorization"] = args[4]
  end
  math.randomseed(seed)
  fixed = wrk.format("GET", prefix .. suffix)
end

function request()
  if keys == 0 then
    return fixed
  end
  return wrk.format("GET", prefix .. math.random(0, keys - 1) .. suffix)
end

-- The first non-2xx answer of each thread, so that a failed run says what went wrong.
function response(status, headers, body)
  if status >= 300 and first_error == nil then
    first_error = status .. " " .. string.sub(body or "", 1, 300)
  end
end

function done(summary, latency, requests)
  for _, thread in ipairs(threads) do
    local seen = thread:get("first_error")
    if seen ~= nil then
      io.write("WRK_ERROR " .. seen .. "\n")
    end
  end
  local e = summary.errors
  io.write(string.format(
    'WRK_JSON {"requests": %d, "duration_us": %d, "p50_us": %d, "p99_us": %d, "max_us": %d, ' ..
    '"connect": %d, "read": %d, "write": %d, "status": %d, "timeout": %d}\n',
    summary.requests, summary.duration, latency:percentile(50), latency:percentile(99), latency.max,
    e.connect, e.read, e.write, e.status, e.timeout))
end
