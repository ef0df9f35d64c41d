# Prints exception.full_message(highlight: false, order: :top), which the
# OpenTelemetry Ruby SDK records in exception.stacktrace, for an exception
# with a cause. Lines marked "frame:" are the lines the parser test expects on
# the stack.
class Ledger
  def initialize(entries)
    @entries = entries
  end

  def total
    @entries.sum { |e| Integer(e) } # frame:total-block
  end

  def self.open(entries)
    new(entries).total # frame:open
  end
end

def report(entries) # frame:report-def
  Ledger.open(entries) # frame:report
rescue ArgumentError => e
  raise RuntimeError, "report failed" # frame:report-raise
end

begin
  report(%w[1 2 x]) # frame:main
rescue => e
  print e.full_message(highlight: false, order: :top)
end
