# Loads markdown files as objects and lets them message each other.
module PromptObjects
  def self.load(path)
    Object.new(File.read(path))
  end
end
