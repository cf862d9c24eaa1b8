package api

import "net/http"

// tracesRoutes mounts Options.Traces, the OTLP/HTTP receiver, at POST /v1/traces. It
// needs the API key like the /api routes: anyone who can send spans can fill the chain.
func (s *Server) tracesRoutes(_ *components) group {
	anything := &schema{Description: "an OTLP ExportTraceServiceRequest or ExportTraceServiceResponse (opentelemetry-proto)"}
	return group{name: "ingest", description: "Spans in over OTLP/HTTP, sealed into the chain.", routes: []route{
		{method: http.MethodPost, path: "/v1/traces", handler: s.traces, op: operation{
			id: "exportTraces", summary: "Receive spans (OTLP/HTTP)",
			description: "The OTLP/HTTP traces endpoint: binary protobuf or OTLP JSON, optionally gzip-encoded. The spans are sealed into the chain, each once: a span whose trace and span ID the chain holds with the same content is accepted and not sealed again; one it holds with other content is rejected. Spans that are not sealed for any other reason than the first are reported in partial_success.",
			body: &requestBody{contentType: "application/x-protobuf", description: "An ExportTraceServiceRequest.", required: true, schema: anything,
				alternativeContents: []string{"application/json"}},
			responses: []response{{status: http.StatusOK, description: "An ExportTraceServiceResponse, in the request's encoding.",
				contentType: "application/x-protobuf", alternativeContents: []string{"application/json"}, schema: anything}},
		}},
	}}
}
