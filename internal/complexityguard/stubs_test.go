package complexityguard

func decoderRows() []row       { return nil }
func symbolicationRows() []row { return nil }
func exporterRows() []row      { return nil }
