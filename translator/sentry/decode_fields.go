package sentry

// The objects of a profile document, each a table from its JSON keys to
// what reads them: a reader finds the mapping of a Sentry field by its
// name. Keys a table does not name are skipped.

// fieldReader reads the value of one key into v.
type fieldReader[T any] func(d *profileDecoder, v *T) error

// readField reads the value of key with its reader in table, or skips it.
func readField[T any](d *profileDecoder, v *T, table map[string]fieldReader[T], key []byte) error {
	if read, ok := table[string(key)]; ok {
		return read(d, v)
	}
	return d.s.skipValue()
}

// fields decodes an object (null is an absent one) into v with table.
func fields[T any](d *profileDecoder, v *T, table map[string]fieldReader[T]) error {
	return d.object(func(key []byte) error { return readField(d, v, table, key) })
}

// stringField reads a string into the field at.
func stringField[T any](at func(*T) *string) fieldReader[T] {
	return func(d *profileDecoder, v *T) (err error) {
		*at(v), err = d.s.stringValue()
		return err
	}
}

// topFields are the keys of a profile document.
var topFields = map[string]fieldReader[Profile]{
	"version":         stringField(func(p *Profile) *string { return &p.Version }),
	"event_id":        (*profileDecoder).eventID,
	"profile_id":      (*profileDecoder).profileID,
	"profiler_id":     stringField(func(p *Profile) *string { return &p.ProfilerID }),
	"chunk_id":        stringField(func(p *Profile) *string { return &p.ChunkID }),
	"platform":        metadataField(func(p *Profile) *string { return &p.Platform }, FieldPlatform),
	"release":         metadataField(func(p *Profile) *string { return &p.Release }, FieldRelease),
	"environment":     metadataField(func(p *Profile) *string { return &p.Environment }, FieldEnvironment),
	"dist":            metadataField(func(p *Profile) *string { return &p.Dist }, FieldDist),
	"timestamp":       (*profileDecoder).profileTimestamp,
	"device":          (*profileDecoder).device,
	"os":              (*profileDecoder).os,
	"runtime":         (*profileDecoder).runtime,
	"client_sdk":      (*profileDecoder).clientSDK,
	"debug_meta":      (*profileDecoder).debugMeta,
	"transaction":     (*profileDecoder).transactionField,
	"transactions":    (*profileDecoder).transactionList,
	"measurements":    (*profileDecoder).measurements,
	"profile":         (*profileDecoder).profileField,
	"sampled_profile": (*profileDecoder).sampledProfileField,
	"content_type":    func(d *profileDecoder, _ *Profile) (err error) { d.contentType, err = d.s.stringValue(); return err },
}

// eventID reads "event_id", which wins over "profile_id".
func (d *profileDecoder) eventID(p *Profile) (err error) {
	d.hasEventID = true
	p.EventID, err = d.s.stringValue()
	return err
}

// profileID reads "profile_id", the event id of SDKs that do not write
// "event_id".
func (d *profileDecoder) profileID(p *Profile) error {
	id, err := d.s.stringValue()
	if !d.hasEventID {
		p.EventID = id
	}
	return err
}

// profileTimestamp reads "timestamp"; a zero time is not present.
func (d *profileDecoder) profileTimestamp(p *Profile) (err error) {
	p.Present &^= FieldTimestamp
	if p.Timestamp, err = d.timestamp(); err == nil && !p.Timestamp.IsZero() {
		p.Present |= FieldTimestamp
	}
	return err
}

// transactionField reads V1 "transaction": one transaction, or null.
func (d *profileDecoder) transactionField(*Profile) error {
	d.transaction = d.transaction[:0]
	if isNull, err := d.s.null(); err != nil || isNull {
		return err
	}
	var t Transaction
	if err := fields(d, &t, transactionFields); err != nil {
		return err
	}
	d.transaction = append(d.transaction, t)
	return nil
}

// transactionList reads "transactions".
func (d *profileDecoder) transactionList(*Profile) error {
	d.transactions = d.transactions[:0]
	return d.array(func(int) error {
		d.transactions = append(d.transactions, Transaction{})
		return fields(d, &d.transactions[len(d.transactions)-1], transactionFields)
	})
}

// transactionFields are the keys of a V1 transaction.
var transactionFields = map[string]fieldReader[Transaction]{
	"id":               stringField(func(t *Transaction) *string { return &t.ID }),
	"name":             stringField(func(t *Transaction) *string { return &t.Name }),
	"trace_id":         stringField(func(t *Transaction) *string { return &t.TraceID }),
	"segment_id":       stringField(func(t *Transaction) *string { return &t.SegmentID }),
	"active_thread_id": func(d *profileDecoder, t *Transaction) (err error) { t.ActiveThreadID, err = d.s.idValue(); return err },
	"relative_start_ns": func(d *profileDecoder, t *Transaction) (err error) {
		t.RelativeStartNS, err = d.s.uintValue(64)
		return err
	},
	"relative_end_ns": func(d *profileDecoder, t *Transaction) (err error) {
		t.RelativeEndNS, err = d.s.uintValue(64)
		return err
	},
}

// profileField reads "profile"; a repeated one replaces the earlier one
// whole, and the arrays keep their memory.
func (d *profileDecoder) profileField(p *Profile) error {
	p.Samples, p.Frames, p.ThreadMetadata, p.QueueMetadata = p.Samples[:0], p.Frames[:0], nil, nil
	p.Stacks = Stacks{Offsets: p.Stacks.Offsets[:0], FrameIndices: p.Stacks.FrameIndices[:0]}
	return fields(d, p, profileFields)
}

// profileFields are the keys of the "profile" object.
var profileFields = map[string]fieldReader[Profile]{
	"samples": (*profileDecoder).samplesField,
	"stacks":  (*profileDecoder).stacksField,
	"frames":  (*profileDecoder).framesField,
	"thread_metadata": func(d *profileDecoder, p *Profile) error {
		p.ThreadMetadata = nil
		return d.threadMetadata(&p.ThreadMetadata)
	},
	"queue_metadata": func(d *profileDecoder, p *Profile) error {
		p.QueueMetadata = nil
		return d.queueMetadata(&p.QueueMetadata)
	},
}

func (d *profileDecoder) samplesField(p *Profile) error {
	p.Samples = p.Samples[:0]
	err := d.samples(&p.Samples)
	if len(p.Samples) == 0 {
		p.Samples = nil
	}
	return err
}

func (d *profileDecoder) stacksField(p *Profile) error {
	p.Stacks = Stacks{Offsets: p.Stacks.Offsets[:0], FrameIndices: p.Stacks.FrameIndices[:0]}
	return d.stacks(&p.Stacks)
}

func (d *profileDecoder) framesField(p *Profile) error {
	p.Frames = p.Frames[:0]
	err := d.frames(&p.Frames)
	if len(p.Frames) == 0 {
		p.Frames = nil
	}
	return err
}

// sampledProfileField notes an Android trace ("sampled_profile"), which is
// not in the sample format.
func (d *profileDecoder) sampledProfileField(*Profile) error {
	isNull, err := d.s.null()
	if err != nil || isNull {
		return err
	}
	d.sampledProfile = true
	return d.s.skipValue()
}

// The fields an object's key clears when the object is repeated.
const (
	fieldsOfDevice = FieldDevice | FieldDeviceArchitecture | FieldDeviceLocale |
		FieldDeviceManufacturer | FieldDeviceModel | FieldDeviceClassification
	fieldsOfOS        = FieldOS | FieldOSName | FieldOSVersion | FieldOSBuildNumber
	fieldsOfRuntime   = FieldRuntime | FieldRuntimeName | FieldRuntimeVersion
	fieldsOfClientSDK = FieldClientSDK | FieldClientSDKName | FieldClientSDKVersion
)

// metadataString reads a string field and records it in present when it was
// a string (null, as in Relay, is absent).
func (d *profileDecoder) metadataString(dst *string, present *Fields, f Fields) error {
	isString := d.s.peek() == '"'
	v, err := d.s.stringValue()
	if err != nil {
		return err
	}
	*dst = v
	if isString {
		*present |= f
	} else {
		*present &^= f // a repeated key's last value wins
	}
	return nil
}

// metadataField reads a metadata string of the profile into the field at,
// recording it as f.
func metadataField(at func(*Profile) *string, f Fields) fieldReader[Profile] {
	return func(d *profileDecoder, p *Profile) error { return d.metadataString(at(p), &p.Present, f) }
}

// metadataObject decodes a metadata object of the profile with table,
// recording the object as f unless it is null; a repeated object first
// clears what the earlier one set (clear).
func (d *profileDecoder) metadataObject(p *Profile, f, clear Fields, table map[string]fieldReader[Profile]) error {
	p.Present &^= clear
	if d.s.peek() != 'n' {
		p.Present |= f
	}
	return fields(d, p, table)
}

func (d *profileDecoder) device(p *Profile) error {
	p.Device = Device{}
	return d.metadataObject(p, FieldDevice, fieldsOfDevice, deviceFields)
}

// deviceFields are the keys of "device".
var deviceFields = map[string]fieldReader[Profile]{
	"architecture": metadataField(func(p *Profile) *string { return &p.Device.Architecture }, FieldDeviceArchitecture),
	"is_emulator": func(d *profileDecoder, p *Profile) (err error) {
		p.Device.IsEmulator, err = d.s.boolValue()
		return err
	},
	"locale":         metadataField(func(p *Profile) *string { return &p.Device.Locale }, FieldDeviceLocale),
	"manufacturer":   metadataField(func(p *Profile) *string { return &p.Device.Manufacturer }, FieldDeviceManufacturer),
	"model":          metadataField(func(p *Profile) *string { return &p.Device.Model }, FieldDeviceModel),
	"classification": metadataField(func(p *Profile) *string { return &p.Device.Classification }, FieldDeviceClassification),
}

func (d *profileDecoder) os(p *Profile) error {
	p.OS = OS{}
	return d.metadataObject(p, FieldOS, fieldsOfOS, osFields)
}

// osFields are the keys of "os".
var osFields = map[string]fieldReader[Profile]{
	"name":         metadataField(func(p *Profile) *string { return &p.OS.Name }, FieldOSName),
	"version":      metadataField(func(p *Profile) *string { return &p.OS.Version }, FieldOSVersion),
	"build_number": metadataField(func(p *Profile) *string { return &p.OS.BuildNumber }, FieldOSBuildNumber),
}

func (d *profileDecoder) runtime(p *Profile) error {
	p.Runtime = Runtime{}
	return d.metadataObject(p, FieldRuntime, fieldsOfRuntime, runtimeFields)
}

// runtimeFields are the keys of "runtime".
var runtimeFields = map[string]fieldReader[Profile]{
	"name":    metadataField(func(p *Profile) *string { return &p.Runtime.Name }, FieldRuntimeName),
	"version": metadataField(func(p *Profile) *string { return &p.Runtime.Version }, FieldRuntimeVersion),
}

func (d *profileDecoder) clientSDK(p *Profile) error {
	p.ClientSDK = ClientSDK{}
	return d.metadataObject(p, FieldClientSDK, fieldsOfClientSDK, clientSDKFields)
}

// clientSDKFields are the keys of "client_sdk".
var clientSDKFields = map[string]fieldReader[Profile]{
	"name":    metadataField(func(p *Profile) *string { return &p.ClientSDK.Name }, FieldClientSDKName),
	"version": metadataField(func(p *Profile) *string { return &p.ClientSDK.Version }, FieldClientSDKVersion),
}

// debugMeta reads "debug_meta": only its "images".
func (d *profileDecoder) debugMeta(p *Profile) error {
	p.DebugMeta = DebugMeta{}
	m := &p.DebugMeta
	return d.object(func(key []byte) error {
		if string(key) != "images" {
			return d.s.skipValue()
		}
		m.Images = nil
		return d.array(func(int) error {
			m.Images = append(m.Images, Image{})
			return fields(d, &m.Images[len(m.Images)-1], imageFields)
		})
	})
}

// imageFields are the keys of a debug image.
var imageFields = map[string]fieldReader[Image]{
	"type":         stringField(func(i *Image) *string { return &i.Type }),
	"code_file":    stringField(func(i *Image) *string { return &i.CodeFile }),
	"code_id":      stringField(func(i *Image) *string { return &i.CodeID }),
	"debug_id":     stringField(func(i *Image) *string { return &i.DebugID }),
	"debug_file":   stringField(func(i *Image) *string { return &i.DebugFile }),
	"uuid":         stringField(func(i *Image) *string { return &i.UUID }),
	"arch":         stringField(func(i *Image) *string { return &i.Arch }),
	"image_addr":   func(d *profileDecoder, i *Image) (err error) { i.ImageAddr, err = d.s.addrValue(); return err },
	"image_vmaddr": func(d *profileDecoder, i *Image) (err error) { i.ImageVMAddr, err = d.s.addrValue(); return err },
	"image_size":   func(d *profileDecoder, i *Image) (err error) { i.ImageSize, err = d.s.uintValue(64); return err },
}

// measurements reads {name: {unit, values}}; a repeated name replaces the
// earlier entry in place.
func (d *profileDecoder) measurements(p *Profile) error {
	p.Measurements = nil
	var index map[string]int
	return d.object(func(key []byte) error {
		name := d.s.intern(key)
		if isNull, err := d.s.null(); err != nil || isNull {
			return err
		}
		m := Measurement{Name: name}
		if err := fields(d, &m, measurementFields); err != nil {
			return err
		}
		upsert(&p.Measurements, &index, name, m)
		return nil
	})
}

// measurementFields are the keys of a measurement.
var measurementFields = map[string]fieldReader[Measurement]{
	"unit":   stringField(func(m *Measurement) *string { return &m.Unit }),
	"values": (*profileDecoder).measurementValues,
}

func (d *profileDecoder) measurementValues(m *Measurement) error {
	m.Values = nil
	return d.array(func(int) error {
		m.Values = append(m.Values, MeasurementValue{})
		return fields(d, &m.Values[len(m.Values)-1], measurementValueFields)
	})
}

// measurementValueFields are the keys of a measurement's value.
var measurementValueFields = map[string]fieldReader[MeasurementValue]{
	"elapsed_since_start_ns": func(d *profileDecoder, v *MeasurementValue) (err error) {
		v.ElapsedSinceStartNS, err = d.s.uintValue(64)
		return err
	},
	"timestamp": func(d *profileDecoder, v *MeasurementValue) (err error) {
		v.Timestamp, err = d.s.measurementNanos()
		return err
	},
	"value": func(d *profileDecoder, v *MeasurementValue) (err error) { v.Value, err = d.s.floatValue(); return err },
}

// threadMetadata reads {thread_id: {name, priority}} in input order; a
// repeated thread id replaces the earlier entry in place.
func (d *profileDecoder) threadMetadata(out *[]ThreadMetadata) error {
	var index map[string]int
	return d.object(func(key []byte) error {
		id := d.s.intern(key)
		if isNull, err := d.s.null(); err != nil || isNull {
			return err
		}
		tm := ThreadMetadata{ThreadID: id}
		if err := fields(d, &tm, threadMetadataFields); err != nil {
			return err
		}
		upsert(out, &index, id, tm)
		return nil
	})
}

// threadMetadataFields are the keys of a thread's metadata.
var threadMetadataFields = map[string]fieldReader[ThreadMetadata]{
	"name":     stringField(func(tm *ThreadMetadata) *string { return &tm.Name }),
	"priority": (*profileDecoder).threadPriority,
}

// threadPriority reads "priority"; null is none.
func (d *profileDecoder) threadPriority(tm *ThreadMetadata) error {
	tm.Priority, tm.HasPriority = 0, false
	if isNull, err := d.s.null(); err != nil || isNull {
		return err
	}
	var err error
	tm.Priority, err = d.s.int64Value()
	tm.HasPriority = err == nil
	return err
}

// queueMetadata reads cocoa {queue_address: {label}} in input order; a
// repeated address replaces the earlier entry in place.
func (d *profileDecoder) queueMetadata(out *[]QueueMetadata) error {
	var index map[string]int
	return d.object(func(key []byte) error {
		addr := d.s.intern(key)
		if isNull, err := d.s.null(); err != nil || isNull {
			return err
		}
		qm := QueueMetadata{Address: addr}
		if err := fields(d, &qm, queueMetadataFields); err != nil {
			return err
		}
		upsert(out, &index, addr, qm)
		return nil
	})
}

// queueMetadataFields are the keys of a queue's metadata.
var queueMetadataFields = map[string]fieldReader[QueueMetadata]{
	"label": stringField(func(qm *QueueMetadata) *string { return &qm.Label }),
}

// upsert appends v as the entry of key, or replaces the entry key already
// has (index maps keys to their entries, made on first use).
func upsert[T any](out *[]T, index *map[string]int, key string, v T) {
	if i, ok := (*index)[key]; ok {
		(*out)[i] = v
		return
	}
	if *index == nil {
		*index = make(map[string]int)
	}
	(*index)[key] = len(*out)
	*out = append(*out, v)
}
