package viz

import (
	"bytes"
	"math"
	"strconv"
	"strings"
	"testing"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protodesc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/types/descriptorpb"
	"google.golang.org/protobuf/types/dynamicpb"

	"github.com/gclock/gclock/merge/datamodel"
	"github.com/gclock/gclock/trace"
)

// pfField is one field of the schema subset: name, number, type, label
// (repeated or optional) and, for messages, the message type name.
type pfField struct {
	name     string
	num      int32
	typ      descriptorpb.FieldDescriptorProto_Type
	repeated bool
	msg      string
}

// perfettoSchema transcribes the messages and fields of Perfetto's
// published protos (perfetto.protos package, proto2) that a gclock trace
// uses, with their numbers and wire types. Decoding the writer's output
// against it with unknown-field checking proves every field we write is
// where Perfetto's schema has it.
func perfettoSchema(t *testing.T) protoreflect.FileDescriptor {
	t.Helper()
	var (
		u64  = descriptorpb.FieldDescriptorProto_TYPE_UINT64
		u32  = descriptorpb.FieldDescriptorProto_TYPE_UINT32
		i32  = descriptorpb.FieldDescriptorProto_TYPE_INT32
		i64  = descriptorpb.FieldDescriptorProto_TYPE_INT64
		str  = descriptorpb.FieldDescriptorProto_TYPE_STRING
		byt  = descriptorpb.FieldDescriptorProto_TYPE_BYTES
		msg  = descriptorpb.FieldDescriptorProto_TYPE_MESSAGE
		f64  = descriptorpb.FieldDescriptorProto_TYPE_FIXED64
		enum = descriptorpb.FieldDescriptorProto_TYPE_INT32 // enums decode as varints; int32 keeps the subset self-contained
	)
	msgs := map[string][]pfField{
		"Trace": {{"packet", 1, msg, true, "TracePacket"}},
		"TracePacket": {
			{"timestamp", 8, u64, false, ""},
			{"trusted_packet_sequence_id", 10, u32, false, ""},
			{"track_event", 11, msg, false, "TrackEvent"},
			{"interned_data", 12, msg, false, "InternedData"},
			{"sequence_flags", 13, u32, false, ""},
			{"track_descriptor", 60, msg, false, "TrackDescriptor"},
		},
		"TrackDescriptor": {
			{"uuid", 1, u64, false, ""},
			{"name", 2, str, false, ""},
			{"process", 3, msg, false, "ProcessDescriptor"},
			{"thread", 4, msg, false, "ThreadDescriptor"},
			{"parent_uuid", 5, u64, false, ""},
		},
		"ProcessDescriptor": {
			{"pid", 1, i32, false, ""},
			{"process_name", 6, str, false, ""},
		},
		"ThreadDescriptor": {
			{"pid", 1, i32, false, ""},
			{"tid", 2, i64, false, ""},
			{"thread_name", 5, str, false, ""},
		},
		"TrackEvent": {
			{"category_iids", 3, u64, true, ""},
			{"debug_annotations", 4, msg, true, "DebugAnnotation"},
			{"type", 9, enum, false, ""},
			{"name_iid", 10, u64, false, ""},
			{"track_uuid", 11, u64, false, ""},
			{"flow_ids", 47, f64, true, ""},
			{"terminating_flow_ids", 48, f64, true, ""},
		},
		"DebugAnnotation": {
			{"name_iid", 1, u64, false, ""},
			{"uint_value", 3, u64, false, ""},
			{"int_value", 4, i64, false, ""},
			{"string_value_iid", 17, u64, false, ""},
		},
		"InternedData": {
			{"event_categories", 1, msg, true, "EventCategory"},
			{"event_names", 2, msg, true, "EventName"},
			{"debug_annotation_names", 3, msg, true, "DebugAnnotationName"},
			{"debug_annotation_string_values", 29, msg, true, "InternedString"},
		},
		"EventCategory":       {{"iid", 1, u64, false, ""}, {"name", 2, str, false, ""}},
		"EventName":           {{"iid", 1, u64, false, ""}, {"name", 2, str, false, ""}},
		"DebugAnnotationName": {{"iid", 1, u64, false, ""}, {"name", 2, str, false, ""}},
		"InternedString":      {{"iid", 1, u64, false, ""}, {"str", 2, byt, false, ""}},
	}
	fd := &descriptorpb.FileDescriptorProto{
		Name:    proto.String("gclock_perfetto_subset.proto"),
		Package: proto.String("perfetto.protos"),
		Syntax:  proto.String("proto2"),
	}
	for name, fields := range msgs {
		m := &descriptorpb.DescriptorProto{Name: proto.String(name)}
		for _, f := range fields {
			label := descriptorpb.FieldDescriptorProto_LABEL_OPTIONAL
			if f.repeated {
				label = descriptorpb.FieldDescriptorProto_LABEL_REPEATED
			}
			fp := &descriptorpb.FieldDescriptorProto{
				Name: proto.String(f.name), Number: proto.Int32(f.num), Type: f.typ.Enum(), Label: label.Enum(),
			}
			if f.msg != "" {
				fp.TypeName = proto.String(".perfetto.protos." + f.msg)
			}
			m.Field = append(m.Field, fp)
		}
		fd.MessageType = append(fd.MessageType, m)
	}
	file, err := protodesc.NewFile(fd, nil)
	if err != nil {
		t.Fatalf("building the Perfetto schema subset: %v", err)
	}
	return file
}

// noUnknown fails if m or any message inside it holds fields the schema
// does not define.
func noUnknown(t *testing.T, m protoreflect.Message, path string) {
	t.Helper()
	if u := m.GetUnknown(); len(u) > 0 {
		t.Fatalf("%s: %d bytes of fields unknown to Perfetto's schema", path, len(u))
	}
	m.Range(func(fd protoreflect.FieldDescriptor, v protoreflect.Value) bool {
		if fd.Kind() != protoreflect.MessageKind {
			return true
		}
		if fd.IsList() {
			l := v.List()
			for i := 0; i < l.Len(); i++ {
				noUnknown(t, l.Get(i).Message(), path+"."+string(fd.Name()))
			}
		} else {
			noUnknown(t, v.Message(), path+"."+string(fd.Name()))
		}
		return true
	})
}

// pfSlice is one decoded slice.
type pfSlice struct {
	track      uint64
	name       string
	begin, end uint64
	ann        map[string]string
}

func TestPerfettoProto_DecodesAgainstPerfettoSchema(t *testing.T) {
	evs := []datamodel.GEvent{
		{Rank: 0, Op: trace.OpAllreduce, CommID: 1, Seq: 0, Root: -1, Sent: 8, Recv: 8, Enter: 1000, Exit: 2500.4, Callsite: 0x10},
		{Rank: 1, Op: trace.OpAllreduce, CommID: 1, Seq: 0, Root: -1, Sent: 8, Recv: 8, Enter: 1200, Exit: 2501, Callsite: 0x10, LocalEnter: 100, LocalExit: 200},
		{Rank: 1, Op: trace.OpBcast, CommID: 1, Seq: 1, Root: 0, Recv: 64, Enter: 3000, Exit: 3100, Callsite: 0x20},
		{Rank: 0, Op: trace.OpBcast, CommID: 1, Seq: 1, Root: 0, Sent: 64, Enter: 2990, Exit: 3050, Callsite: 0x20},
	}
	msgs := []datamodel.Message{{Src: 0, Dst: 1, Tag: 7, Bytes: 512, SendOp: trace.OpIsend, RecvOp: trace.OpWaitall, SendStart: 4000, RecvEnter: 4100, RecvExit: 4300}}
	var buf bytes.Buffer
	const origin = int64(1_800_000_000_000_000_000) // CLOCK_REALTIME-sized origin keeps its ns
	p := NewPerfettoProto(&buf, []RankMeta{{Rank: 0, Host: "n0"}, {Rank: 1, Host: "n1"}})
	p.SetRunOrigin(origin)
	p.SetErrorBar(func(rank int32, local int64) float64 { // rank 0: exact; local 0: unknown
		switch {
		case rank == 0:
			return 0
		case local == 0:
			return -1
		}
		return float64(local) + 0.4
	})
	p.SetRankResolve(func(rank int32, pc uint64) string {
		if pc == 0x10 {
			return "solver.c:42"
		}
		return ""
	})
	for i := range evs {
		if err := p.Add(&evs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.AddMessages(msgs); err != nil {
		t.Fatal(err)
	}
	marks := []datamodel.Mark{{Kind: datamodel.MarkRootCause, Rank: 1, Start: 2600, End: 2900, Label: "root cause 1: a → b"},
		{Kind: datamodel.MarkCriticalPath, Rank: 0, Start: 1000, End: 2990, Label: "critical path"}}
	if err := p.AddMarks(marks); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}

	file := perfettoSchema(t)
	traceDesc := file.Messages().ByName("Trace")
	tr := dynamicpb.NewMessage(traceDesc)
	if err := proto.Unmarshal(buf.Bytes(), tr); err != nil {
		t.Fatalf("the output does not decode as perfetto.protos.Trace: %v", err)
	}
	noUnknown(t, tr, "Trace")

	// Replay the sequence: interning tables, tracks, slices, flows.
	names, strs, anns := map[uint64]string{}, map[uint64]string{}, map[uint64]string{}
	procName := map[uint64]string{}
	markTrack := map[uint64]string{}
	threadParent := map[uint64]uint64{}
	open := map[uint64]*pfSlice{}
	var slices []pfSlice
	flowStart, flowEnd := map[uint64]uint64{}, map[uint64]uint64{}
	get := func(m protoreflect.Message, name string) protoreflect.Value {
		return m.Get(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	has := func(m protoreflect.Message, name string) bool {
		return m.Has(m.Descriptor().Fields().ByName(protoreflect.Name(name)))
	}
	pk := get(tr, "packet").List()
	for i := 0; i < pk.Len(); i++ {
		m := pk.Get(i).Message()
		if get(m, "trusted_packet_sequence_id").Uint() != 1 {
			t.Fatalf("packet %d: no trusted_packet_sequence_id 1", i)
		}
		flags := get(m, "sequence_flags").Uint()
		if (i == 0) != (flags == 1) || (i > 0 && flags != 2) {
			t.Fatalf("packet %d: sequence_flags %d (want 1 on the first packet, 2 after)", i, flags)
		}
		if has(m, "interned_data") {
			id := get(m, "interned_data").Message()
			for _, f := range []struct {
				field string
				into  map[uint64]string
			}{{"event_names", names}, {"debug_annotation_names", anns}} {
				l := get(id, f.field).List()
				for j := 0; j < l.Len(); j++ {
					e := l.Get(j).Message()
					f.into[get(e, "iid").Uint()] = get(e, "name").String()
				}
			}
			l := get(id, "debug_annotation_string_values").List()
			for j := 0; j < l.Len(); j++ {
				e := l.Get(j).Message()
				strs[get(e, "iid").Uint()] = string(get(e, "str").Bytes())
			}
		}
		if has(m, "track_descriptor") {
			d := get(m, "track_descriptor").Message()
			uuid := get(d, "uuid").Uint()
			if has(d, "process") {
				procName[uuid] = get(get(d, "process").Message(), "process_name").String()
			}
			if has(d, "thread") {
				threadParent[uuid] = get(d, "parent_uuid").Uint()
			} else if has(d, "parent_uuid") { // AddMarks' tracks
				markTrack[uuid] = get(d, "name").String()
				threadParent[uuid] = get(d, "parent_uuid").Uint()
			}
		}
		if has(m, "track_event") {
			te := get(m, "track_event").Message()
			track := get(te, "track_uuid").Uint()
			if _, ok := threadParent[track]; !ok {
				t.Fatalf("packet %d: event on undeclared track %d", i, track)
			}
			ts := get(m, "timestamp").Uint()
			switch get(te, "type").Int() {
			case 1:
				s := &pfSlice{track: track, name: names[get(te, "name_iid").Uint()], begin: ts, ann: map[string]string{}}
				if s.name == "" {
					t.Fatalf("packet %d: slice name iid %d not interned before use", i, get(te, "name_iid").Uint())
				}
				l := get(te, "debug_annotations").List()
				for j := 0; j < l.Len(); j++ {
					a := l.Get(j).Message()
					key := anns[get(a, "name_iid").Uint()]
					switch {
					case has(a, "uint_value"):
						s.ann[key] = strconv.FormatUint(get(a, "uint_value").Uint(), 10)
					case has(a, "int_value"):
						s.ann[key] = strconv.FormatInt(get(a, "int_value").Int(), 10)
					case has(a, "string_value_iid"):
						s.ann[key] = strs[get(a, "string_value_iid").Uint()]
					}
				}
				open[track] = s
			case 2:
				s := open[track]
				if s == nil {
					t.Fatalf("packet %d: slice end without begin on track %d", i, track)
				}
				s.end = ts
				slices = append(slices, *s)
				delete(open, track)
			case 3:
				fl := get(te, "flow_ids").List()
				for j := 0; j < fl.Len(); j++ {
					flowStart[fl.Get(j).Uint()] = track
				}
				fl = get(te, "terminating_flow_ids").List()
				for j := 0; j < fl.Len(); j++ {
					flowEnd[fl.Get(j).Uint()] = track
				}
			}
		}
	}
	var markSlices []pfSlice
	for i := 0; i < len(slices); i++ {
		if _, ok := markTrack[slices[i].track]; ok {
			markSlices = append(markSlices, slices[i])
			slices = append(slices[:i], slices[i+1:]...)
			i--
		}
	}
	if len(slices) != len(evs) {
		t.Fatalf("%d slices decoded, want %d", len(slices), len(evs))
	}
	if len(markSlices) != len(marks) {
		t.Fatalf("%d mark slices decoded, want %d", len(markSlices), len(marks))
	}
	for i, m := range marks {
		s := markSlices[i]
		want := map[datamodel.MarkKind]string{datamodel.MarkRootCause: "root causes", datamodel.MarkCriticalPath: "critical path"}[m.Kind]
		if s.name != m.Label || markTrack[s.track] != want || s.begin != uint64(origin+int64(m.Start)) || s.end != uint64(origin+int64(m.End)) ||
			!strings.HasPrefix(procName[threadParent[s.track]], "rank "+strconv.Itoa(int(m.Rank))) {
			t.Errorf("mark %d: slice %+v on track %q of %q", i, s, markTrack[s.track], procName[threadParent[s.track]])
		}
	}
	for i, ev := range evs {
		s := slices[i]
		want := origin + int64(math.Round(ev.Enter))
		if s.begin != uint64(want) || s.end != uint64(origin+int64(math.Round(ev.Exit))) {
			t.Errorf("slice %d: [%d,%d], want [%d,%d]", i, s.begin, s.end, want, origin+int64(math.Round(ev.Exit)))
		}
		if s.name != ev.Op.String() || s.ann["comm"] != "1" || s.ann["seq"] != strconv.FormatUint(uint64(ev.Seq), 10) {
			t.Errorf("slice %d: %s %v", i, s.name, s.ann)
		}
		if proc := procName[threadParent[s.track]]; !strings.HasPrefix(proc, "rank "+strconv.FormatInt(int64(ev.Rank), 10)+" (n") {
			t.Errorf("slice %d: process %q for rank %d", i, proc, ev.Rank)
		}
	}
	if slices[0].ann["callsite"] != "solver.c:42" || slices[2].ann["callsite"] != "0x20" || slices[2].ann["root"] != "0" || slices[2].ann["bytes_recv"] != "64" {
		t.Errorf("annotations: %v / %v", slices[0].ann, slices[2].ann)
	}
	for i, want := range [][2]string{{"0", "0"}, {"100", "200"}, {"", ""}, {"0", "0"}} {
		if a := slices[i].ann; a["enter_err_ns"] != want[0] || a["exit_err_ns"] != want[1] {
			t.Errorf("slice %d: clock error annotations %q/%q, want %q/%q", i, a["enter_err_ns"], a["exit_err_ns"], want[0], want[1])
		}
	}
	if flowStart[1] != threadUUID(0) || flowEnd[1] != threadUUID(1) {
		t.Errorf("flow 1: from track %d to %d, want rank 0 -> rank 1", flowStart[1], flowEnd[1])
	}
	if len(names) != 5 { // MPI_Allreduce, MPI_Bcast, one message name, two mark labels: each interned once
		t.Errorf("interned names %v", names)
	}
}

// TestPerfettoProto_SmallerThanJSON: the native form of a realistic event
// stream is at most half the JSON's size (the reason it is the default).
func TestPerfettoProto_SmallerThanJSON(t *testing.T) {
	var pb, js bytes.Buffer
	ranks := []RankMeta{{Rank: 0}, {Rank: 1}, {Rank: 2}, {Rank: 3}}
	p := NewPerfettoProto(&pb, ranks)
	p.SetRunOrigin(5_000_000_000)
	j := NewPerfetto(&js, ranks, PerfettoRunOrigin(5_000_000_000))
	ops := []trace.Op{trace.OpAllreduce, trace.OpIsend, trace.OpIrecv, trace.OpWaitall}
	for i := 0; i < 20000; i++ {
		ev := datamodel.GEvent{Rank: int32(i % 4), Op: ops[i%len(ops)], CommID: 1, Root: -1, Sent: 8, Recv: 8,
			Enter: float64(i) * 1234.5, Exit: float64(i)*1234.5 + 321, Callsite: uint64(0x400000 + i%7)}
		if ev.Op == trace.OpAllreduce {
			ev.Seq = uint32(i / 4) // p2p records with Seq > 0 are continuations
		}
		if err := p.Add(&ev); err != nil {
			t.Fatal(err)
		}
		if err := j.Add(&ev); err != nil {
			t.Fatal(err)
		}
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := j.Close(); err != nil {
		t.Fatal(err)
	}
	t.Logf("20000 events: protobuf %d B (%.1f B/event), JSON %d B (%.1f B/event)", pb.Len(), float64(pb.Len())/20000, js.Len(), float64(js.Len())/20000)
	if pb.Len()*2 > js.Len() {
		t.Errorf("protobuf %d B is not at most half the JSON's %d B", pb.Len(), js.Len())
	}
}
