-- wrk script for http.ts: sends one request per API key in turn, so the load spreads over many
-- keys (each key may make 60 proof requests a minute), and counts answers with another status.
--
--   wrk -t2 ... -s rotate-keys.lua <url> -- <keys file> <threads> <expected status> <method> <path> [body]
--
-- The keys file holds one key a line. Thread i of n takes the keys i, i+n, i+2n, ..., so no two
-- threads share a key, and builds all its requests once in init(): request() only picks the next.

local threads = {}

function setup(thread)
  thread:set("id", #threads)
  table.insert(threads, thread)
end

local requests = {}
local next_index = 0
local expected = 0
unexpected = 0 -- a global, so done() can read it with thread:get

function init(args)
  local stride, line_number = tonumber(args[2]), 0
  expected = tonumber(args[3])
  for key in io.lines(args[1]) do
    if key ~= "" then
      if line_number % stride == id then
        local headers = { ["Authorization"] = "Bearer " .. key, ["Content-Type"] = "application/json" }
        requests[#requests + 1] = wrk.format(args[4], args[5], headers, args[6])
      end
      line_number = line_number + 1
    end
  end
  if #requests == 0 then error("no keys for thread " .. id .. " in " .. args[1]) end
end

function request()
  next_index = next_index % #requests + 1
  return requests[next_index]
end

function response(status)
  if status ~= expected then unexpected = unexpected + 1 end
end

function done()
  local total = 0
  for _, thread in ipairs(threads) do total = total + thread:get("unexpected") end
  io.write(string.format("unexpected statuses: %d\n", total))
end
