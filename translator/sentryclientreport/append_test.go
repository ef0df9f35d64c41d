package sentryclientreport

import "github.com/sentryprofile/otelcol-sentryprofile/translator/sentrysignal"

// The tests decode and append in one call, as the receiver once did; the
// receiver now decodes first, to read the payload's resource too.

// AppendDiscards decodes a client report and appends its counts to dst,
// returning how many; on error dst is unchanged (see Decode).
func AppendDiscards(payload []byte, opts sentrysignal.Options, dst *[]Discard) (int, error) {
	r, err := Decode(payload, opts)
	if err != nil {
		return 0, err
	}
	*dst = append(*dst, r.Discards...)
	return len(r.Discards), nil
}
