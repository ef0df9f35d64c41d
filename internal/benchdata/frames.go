package benchdata

import (
	"math/rand/v2"
	"strconv"
	"strings"
)

// Where a generated script frame's code lives. The split drives in_app and
// the shape of abs_path, as it does in real python and node profiles.
const (
	codeApp = iota
	codeLibrary
	codeRuntime
)

// pick returns one word of a space-separated vocabulary.
func pick(rng *rand.Rand, words string) string {
	ws := strings.Fields(words)
	return ws[rng.IntN(len(ws))]
}

func codeKind(rng *rand.Rand) int {
	switch u := rng.IntN(20); {
	case u < 7:
		return codeApp
	case u < 16:
		return codeLibrary
	default:
		return codeRuntime
	}
}

// appendScriptFrame writes frame i of a python (or node, for the JS
// platforms) profile with the keys those SDKs send.
func appendScriptFrame(b []byte, rng *rand.Rand, i int, platform string) []byte {
	if isJS(platform) {
		return appendNodeFrame(b, rng, i)
	}
	return appendPythonFrame(b, rng, i)
}

func appendPythonFrame(b []byte, rng *rand.Rand, i int) []byte {
	kind := codeKind(rng)
	var module, absRoot string
	switch kind {
	case codeApp:
		module = "app." + pick(rng, appAreas) + "." + pick(rng, appLayers)
		absRoot = "/srv/app/"
	case codeLibrary:
		module = pick(rng, pythonLibraries) + "." + pick(rng, libraryParts)
		absRoot = "/srv/app/.venv/lib/python3.11/site-packages/"
	default:
		module = pick(rng, pythonStdlib)
		absRoot = "/usr/local/lib/python3.11/"
	}
	filename := strings.ReplaceAll(module, ".", "/") + ".py"

	b = append(b, `{"abs_path":`...)
	b = strconv.AppendQuote(b, absRoot+filename)
	b = append(b, `,"module":`...)
	b = strconv.AppendQuote(b, module)
	b = append(b, `,"filename":`...)
	b = strconv.AppendQuote(b, filename)
	b = append(b, `,"function":`...)
	b = strconv.AppendQuote(b, functionName(rng, i))
	b = append(b, `,"lineno":`...)
	b = strconv.AppendInt(b, int64(1+rng.IntN(1500)), 10)
	b = append(b, `,"in_app":`...)
	b = strconv.AppendBool(b, kind == codeApp)
	return append(b, '}')
}

func appendNodeFrame(b []byte, rng *rand.Rand, i int) []byte {
	kind := codeKind(rng)
	var path, module string
	switch kind {
	case codeApp:
		area, layer := pick(rng, appAreas), pick(rng, appLayers)
		path = "/srv/app/dist/" + area + "/" + layer + ".js"
		module = area + ":" + layer
	case codeLibrary:
		lib, part := pick(rng, nodeLibraries), pick(rng, libraryParts)
		path = "/srv/app/node_modules/" + lib + "/lib/" + part + ".js"
		module = lib + ".lib:" + part
	default:
		part := pick(rng, nodeInternals)
		path = "node:internal/" + part
		module = "internal:" + part
	}

	b = append(b, `{"function":`...)
	b = strconv.AppendQuote(b, functionName(rng, i))
	b = append(b, `,"abs_path":`...)
	b = strconv.AppendQuote(b, path)
	b = append(b, `,"filename":`...)
	b = strconv.AppendQuote(b, path)
	b = append(b, `,"module":`...)
	b = strconv.AppendQuote(b, module)
	b = append(b, `,"lineno":`...)
	b = strconv.AppendInt(b, int64(1+rng.IntN(900)), 10)
	b = append(b, `,"colno":`...)
	b = strconv.AppendInt(b, int64(1+rng.IntN(80)), 10)
	b = append(b, `,"in_app":`...)
	b = strconv.AppendBool(b, kind == codeApp)
	return append(b, '}')
}

// functionName is "Class.method" most of the time and a free function
// otherwise; the frame index is folded in so that frames stay distinct, as
// SDKs deduplicate frames before sending.
func functionName(rng *rand.Rand, i int) string {
	method := pick(rng, methodNames) + "_" + strconv.Itoa(i)
	if rng.IntN(3) == 0 {
		return method
	}
	return pick(rng, classNames) + "." + method
}

// The vocabularies are space-separated constants so that they cannot be
// mutated; splitting them costs nothing next to writing the payload.
const (
	appAreas        = "orders payments catalog users search shipping inventory notifications"
	appLayers       = "views services models serializers tasks utils repository handlers"
	pythonLibraries = "django sqlalchemy requests urllib3 redis celery jinja2 werkzeug psycopg2 botocore pydantic kombu"
	libraryParts    = "core base engine connection client utils sessions pool query response"
	pythonStdlib    = "threading socket ssl json.decoder http.client selectors asyncio.base_events concurrent.futures.thread queue logging"
	nodeLibraries   = "express pg ioredis undici fastify mongoose axios graphql knex ws"
	nodeInternals   = "process/task_queues timers streams/readable net http_parser fs/promises async_hooks"
	classNames      = "OrderService Session Connection Query Response Engine Pool Handler Serializer Cache Router Client"
	methodNames     = "get execute send process validate render fetch_all commit handle dispatch make_request run wait parse encode"
)
