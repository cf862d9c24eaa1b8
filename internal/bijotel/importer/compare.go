package importer

import (
	"context"
	"errors"
	"fmt"

	"github.com/cairn-dev/cairn/pkg/bijotel"
	"github.com/cairn-dev/cairn/pkg/protocol"
)

// errStop ends a scan early once the first difference is found.
var errStop = errors.New("stop")

// compare checks that the legacy chain read now (now, but for the export's time, which is
// the earlier one's) is the one the earlier import's bridge binds. When it is not, the
// error is a *ChangedError naming the first legacy seq that differs.
func compare(ctx context.Context, o Options, earlier, now *protocol.Bridge) error {
	if earlier.LegacyFirstSeq == now.LegacyFirstSeq && earlier.LegacyRows == now.LegacyRows &&
		earlier.LegacyFirstPrevHash == now.LegacyFirstPrevHash && earlier.LegacyHeadHMACHash == now.LegacyHeadHMACHash &&
		earlier.LegacyRowsSHA256 == now.LegacyRowsSHA256 {
		if earlier.LegacyExportSHA256 != now.LegacyExportSHA256 {
			return errors.New("the legacy chain is unchanged, but its export would differ from the one the bridge record binds: " +
				"give the same --sign-key as the first import (or none, if it had none)")
		}
		return nil
	}
	if now.LegacyFirstSeq > earlier.LegacyFirstSeq {
		return &ChangedError{Seq: earlier.LegacyFirstSeq, Detail: "the row is gone (archived or deleted since the import)"}
	}
	if now.LegacyFirstSeq < earlier.LegacyFirstSeq {
		return &ChangedError{Seq: now.LegacyFirstSeq, Detail: "the row was not in the import"}
	}
	return firstDifference(ctx, o, earlier, now)
}

// firstDifference compares the legacy rows, from the first on, with the entries the
// earlier import made of them.
func firstDifference(ctx context.Context, o Options, earlier, now *protocol.Bridge) error {
	var found *ChangedError
	var got protocol.Entry
	err := o.Legacy.Scan(ctx, now.LegacyFirstSeq, now.LegacyLastSeq, func(r *bijotel.Row) error {
		if r.Seq > earlier.LegacyLastSeq {
			found = &ChangedError{Seq: r.Seq, Detail: "the row was added after the import"}
			return errStop
		}
		e, err := o.Into.Entry(ctx, earlier.FirstSeq+r.Seq-earlier.LegacyFirstSeq)
		if err != nil {
			return err
		}
		r.CairnEntry(&got)
		if d := differs(&got, e); d != "" {
			found = &ChangedError{Seq: r.Seq, Detail: d}
			return errStop
		}
		return nil
	})
	if err != nil && !errors.Is(err, errStop) {
		return err
	}
	if found != nil {
		return found
	}
	if now.LegacyLastSeq < earlier.LegacyLastSeq {
		return &ChangedError{Seq: now.LegacyLastSeq + 1, Detail: "the row is gone (deleted since the import)"}
	}
	// Every row is as imported, so what differs is what no row shows: the first link.
	return &ChangedError{Seq: now.LegacyFirstSeq, Detail: "its prev_hash differs from the import's"}
}

// differs names the first of the legacy row's values (as entry got) that the imported
// entry want does not hold, or returns "".
func differs(got, want *protocol.Entry) string {
	for _, f := range []struct{ name, got, want string }{
		{"canonical_hash", got.CanonicalHash, want.CanonicalHash},
		{"timestamp_ns", got.TimestampNS, want.TimestampNS},
		{"trace_id", got.TraceID, want.TraceID},
		{"span_id", got.SpanID, want.SpanID},
		{"span_name", got.SpanName, want.SpanName},
		{"span_kind", got.SpanKind, want.SpanKind},
	} {
		if f.got != f.want {
			return fmt.Sprintf("its %s differs from the imported entry %d's", f.name, want.Seq)
		}
	}
	return ""
}
