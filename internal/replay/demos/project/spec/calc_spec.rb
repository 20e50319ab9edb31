require_relative "../lib/calc"

RSpec.describe Calc do
  it "adds" do
    expect(Calc.new.add(1, 2)).to eq(3)
  end
end
